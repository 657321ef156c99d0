/**
 * The Azure OpenAI wire captures of this folder, for tests: the conformance suite's Chat answers as
 * Azure sends them (the prompt-filter chunk first, `content_filter_results` on each choice, no
 * `service_tier`; docs/wire-protocols.md §17.3). Replayed by test/support/upstream-double.ts.
 * Test-only code.
 */

/** The folder itself, for tables that name captures relative to it (test/conformance). */
export const AZURE_FIXTURES = new URL('./', import.meta.url);
