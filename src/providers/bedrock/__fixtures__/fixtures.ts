/**
 * The Bedrock wire captures of this folder, for tests (docs/wire-protocols.md §18): the conformance
 * suite's Converse answers, written in Bedrock's shapes. A stream is one event-stream message per
 * line, as JSON: `{"event": <:event-type>, "payload": {…}}` (the payload with the `p` padding real
 * events carry), which test/support/bedrock-upstream.ts frames with AWS's codec before the double
 * sends it; whole answers and error bodies are JSON as Bedrock sends them. Test-only code.
 */

/** The folder itself, for tables that name captures relative to it (test/conformance). */
export const BEDROCK_FIXTURES = new URL('./', import.meta.url);
