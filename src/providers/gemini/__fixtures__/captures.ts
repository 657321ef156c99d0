/**
 * The Gemini wire captures of this folder, for tests. The upstream double itself is the project's
 * generic one (test/support/upstream-double.ts): it serves any path. Test-only code.
 */
import { readCapture, type CaptureFill } from '../../../../test/support/captures.js';
import type { UpstreamDouble } from '../../../../test/support/upstream-double.js';

/** The folder itself, for tables that name captures relative to it (test/conformance). */
export const GEMINI_FIXTURES = new URL('./', import.meta.url);

/** A capture's text, with `{{BASE_URL}}` and `{{API_KEY}}` filled in when given. */
export function capture(name: string, fill: CaptureFill = {}): string {
  return readCapture(GEMINI_FIXTURES, name, fill);
}

/** The double's address with Gemini's version segment, as a catalog would give it. */
export function geminiBaseUrl(double: Pick<UpstreamDouble, 'baseUrl'>): string {
  return `${new URL(double.baseUrl).origin}/v1beta`;
}

/** The events of an SSE capture, split on blank lines whatever the line ends. */
export function captureEvents(text: string): string[] {
  return text
    .split(/\r\n\r\n|\n\n/)
    .filter((event) => event.trim() !== '')
    .map((event) => `${event}\r\n\r\n`);
}
