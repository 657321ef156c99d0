/**
 * The Vertex AI wire captures of this folder, for tests: what Vertex answers in its own words
 * beside the Gemini and Anthropic captures its publishers' wires share (docs/wire-protocols.md
 * §19.5). Replayed by test/support/upstream-double.ts. Test-only code.
 */

/** The folder itself, for tables that name captures relative to it (test/conformance). */
export const VERTEX_FIXTURES = new URL('./', import.meta.url);
