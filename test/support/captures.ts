/**
 * Reads recorded upstream wire captures from a provider's `__fixtures__` folder. Captures that echo
 * the upstream's address or key (as real upstreams do in error messages) hold `{{BASE_URL}}` and
 * `{{API_KEY}}`, filled in per test so that redaction can be checked. Test-only code.
 */
import { readFileSync } from 'node:fs';

/** What to put in a capture's placeholders. */
export interface CaptureFill {
  baseUrl?: string;
  apiKey?: string;
}

/** The text of capture `name` in `folder` (a directory URL ending in `/`), placeholders filled when given. */
export function readCapture(folder: URL, name: string, fill: CaptureFill = {}): string {
  let text = readFileSync(new URL(name, folder), 'utf8');
  if (fill.baseUrl !== undefined) text = text.replaceAll('{{BASE_URL}}', fill.baseUrl);
  if (fill.apiKey !== undefined) text = text.replaceAll('{{API_KEY}}', fill.apiKey);
  return text;
}
