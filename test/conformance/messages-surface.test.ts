/**
 * The Anthropic Messages surface (`POST /v1/messages`) over every provider type: a request shaped
 * like Claude Code's (cached system blocks, a mid-conversation system turn, adaptive thinking with
 * its text omitted and an effort, context management, metadata, tool schemas with `$schema`,
 * `additionalProperties` and `exclusiveMinimum`, a deferred tool and a server tool) is passed
 * through to Anthropic and translated for the others, streamed and not, and answers in Anthropic's
 * format with the upstream's text.
 */
import { expect } from 'vitest';
import { startHarness } from '../support/harness.js';
import { baseUrlOf, type ConformanceCase, doubleReplaying, KEY_ENV, PROVIDER_NAME, type ProviderEntry, rawEntry, runConformance, SECRET, TEXT } from './provider-table.js';

const CLAUDE_CODE_LIKE = {
  model: 'conformance-model',
  max_tokens: 32_000,
  system: [
    { type: 'text', text: 'x-anthropic-billing-header: cc_version=0;' },
    { type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } },
  ],
  messages: [
    { role: 'user', content: [{ type: 'text', text: '<system-reminder>Be careful.</system-reminder>' }, { type: 'text', text: 'Say hello.', cache_control: { type: 'ephemeral' } }] },
    { role: 'system', content: [{ type: 'text', text: '# Environment\nPlatform: linux' }] },
  ],
  tools: [
    {
      name: 'Read',
      description: 'Reads a file',
      input_schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { file_path: { type: 'string' }, limit: { type: 'integer', exclusiveMinimum: 0, maximum: 9_007_199_254_740_991 } },
        required: ['file_path'],
        additionalProperties: false,
      },
    },
    { name: 'DeferredToolPlaceholder', description: 'Loaded later', input_schema: { type: 'object', properties: {} }, defer_loading: true },
    { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
  ],
  metadata: { user_id: '{"session_id":"s"}' },
  thinking: { type: 'adaptive', display: 'omitted' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  output_config: { effort: 'medium' },
};

async function send(entry: ProviderEntry, stream: boolean): Promise<{ status: number; text: string; upstreamRequests: number }> {
  const double = await doubleReplaying(entry, (request) => (request.headers.accept === 'text/event-stream' ? entry.captures.text : entry.captures.wholeText));
  const harness = await startHarness({
    catalog: {
      providers: [rawEntry(entry, baseUrlOf(entry, double))],
      models: [{ id: 'conformance-model', prices: { input: '1', output: '4' }, max_output_tokens: 8_192, reasoning_efforts: ['low', 'medium', 'high'], targets: [{ provider: PROVIDER_NAME, model: entry.upstreamModel }] }],
    },
    env: { [KEY_ENV]: SECRET },
  });
  try {
    const account = await harness.newAccount('5');
    const response = await harness.post('/v1/messages?beta=true', { ...CLAUDE_CODE_LIKE, stream }, null, { 'x-api-key': account.secret, 'anthropic-beta': 'context-management-2025-06-27' });
    return { status: response.status, text: await response.text(), upstreamRequests: double.requests.length };
  } finally {
    await harness.close();
  }
}

/** The text of a Messages stream's text deltas. */
function streamedText(sse: string): string {
  return sse
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as { type?: string; delta?: { type?: string; text?: string } })
    .filter((event) => event.type === 'content_block_delta' && event.delta?.type === 'text_delta')
    .map((event) => event.delta?.text ?? '')
    .join('');
}

const CASES: ConformanceCase[] = [
  {
    name: "a Claude Code request, streamed: Anthropic's events with the upstream's text",
    async run(entry) {
      const { status, text, upstreamRequests } = await send(entry, true);
      expect(status, text).toBe(200);
      expect(upstreamRequests).toBe(1);
      expect(text.startsWith('event: message_start\n')).toBe(true);
      // Clients price each message from message_start: the input is there, never a 0 (the
      // upstream's report where it sends one first, else the gateway's count).
      const start = JSON.parse(text.slice(text.indexOf('data: ') + 6, text.indexOf('\n\n'))) as { message: { usage: { input_tokens: number } } };
      expect(start.message.usage.input_tokens).toBeGreaterThan(0);
      expect(text.trimEnd().split('\n\n').at(-1)).toMatch(/^event: message_stop\ndata: \{"type": ?"message_stop"\}$/);
      expect(streamedText(text)).toBe(TEXT);
    },
  },
  {
    name: 'a Claude Code request, not streamed: one message object',
    async run(entry) {
      const { status, text } = await send(entry, false);
      expect(status, text).toBe(200);
      const message = JSON.parse(text) as { type: string; role: string; content: Array<{ type: string; text?: string }> };
      expect(message).toMatchObject({ type: 'message', role: 'assistant' });
      expect(message.content.filter((block) => block.type === 'text').map((block) => block.text).join('')).toBe(TEXT);
    },
  },
];

runConformance('Anthropic Messages surface', CASES);
