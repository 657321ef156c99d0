/**
 * The recorded OpenAI wire captures of this folder (Chat Completions and Responses), for tests.
 * They are replayed by the generic upstream double of test/support/upstream-double.ts. Test-only code.
 */
import { readCapture, type CaptureFill } from '../../../../test/support/captures.js';

/** The folder itself, for tables that name captures relative to it (test/conformance). */
export const OPENAI_FIXTURES = new URL('./', import.meta.url);

/** A fixture's text, with `{{BASE_URL}}` and `{{API_KEY}}` filled in when given. */
export function fixture(name: string, fill: CaptureFill = {}): string {
  return readCapture(OPENAI_FIXTURES, name, fill);
}
