/**
 * The recorded Anthropic wire captures of this folder, for tests (the provider's own and the
 * end-to-end suite). Test-only code. The captures are replayed by the generic upstream double of
 * test/support/upstream-double.ts.
 */
import { readCapture } from '../../../../test/support/captures.js';

/** The folder itself, for tables that name captures relative to it (test/conformance). */
export const ANTHROPIC_FIXTURES = new URL('./', import.meta.url);

/** The captures this folder holds. */
export type AnthropicFixture =
  | 'text-stream.sse'
  | 'tool-use-stream.sse'
  | 'thinking-stream.sse'
  | 'error-mid-stream.sse'
  | 'message.json'
  | 'error-400.json'
  | 'error-401.json'
  | 'error-429.json'
  | 'error-529.json'
  | 'error-500.json';

export function fixture(name: AnthropicFixture): string {
  return readCapture(ANTHROPIC_FIXTURES, name);
}
