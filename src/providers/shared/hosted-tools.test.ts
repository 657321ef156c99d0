/**
 * Hosted web search across the providers (docs/wire-protocols.md §3.4): which tools each
 * route keeps and how it sends them, and how each upstream's own search comes back as a
 * `web-search` event beside the answer's text, never as a function call.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { OpenAIProviderConfig } from '../../config/schema.js';
import type { CanonicalEvent, CanonicalRequest, HostedTool } from '../../protocol/canonical.js';
import { decodeSse } from '../../lib/sse-decoder.js';
import { anthropicSearchMessage, anthropicSearchStream, geminiGroundedStream, responsesSearchStream, SEARCH_QUERY, SEARCH_TEXT } from '../../../test/support/web-search-answers.js';
import { MessagesStreamTranslator, messageObjectEvents } from '../anthropic/messages-stream.js';
import { toMessagesBody } from '../anthropic/messages-request.js';
import { toGeminiBody } from '../gemini/request-body.js';
import { GeminiStreamTranslator } from '../gemini/stream-translator.js';
import { createOpenAIProvider } from '../openai/openai-provider.js';
import { ResponsesStreamTranslator, responsesObjectEvents, toResponsesBody } from '../openai/responses-wire.js';
import type { StreamTranslator } from './stream-translator.js';
import { isWebSearch, responsesTool } from './hosted-tools.js';

const responsesSearch: HostedTool = { type: 'web_search', raw: { type: 'web_search', search_context_size: 'low' }, param: 'tools[0].type' };
const claudeSearch: HostedTool = { type: 'web_search_20250305', raw: { type: 'web_search_20250305', name: 'web_search', max_uses: 8, allowed_domains: ['example.com'] }, param: 'tools[1].type', wire: 'anthropic' };
const claudeCode: HostedTool = { type: 'code_execution_20250522', raw: { type: 'code_execution_20250522', name: 'code_execution' }, param: 'tools[2].type', wire: 'anthropic' };

function request(hostedTools: HostedTool[], map: boolean): CanonicalRequest {
  return { model: 'm', input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather?' }] }], tools: [], toolChoice: 'auto', stream: true, hostedTools, ...(map ? { mapHostedTools: true } : {}) };
}

async function translateAll(translator: StreamTranslator, text: string): Promise<CanonicalEvent[]> {
  const events: CanonicalEvent[] = [];
  for await (const sse of decodeSse((async function* () {
    yield Buffer.from(text);
  })())) events.push(...translator.translate(sse));
  return [...events, ...(translator.endOfBody() ?? [])];
}

const shown = (events: CanonicalEvent[]) => events.filter((event) => event.type === 'web-search' || event.type === 'text-delta' || event.type.startsWith('tool-call'));

describe('which hosted tools are web searches', () => {
  it("knows OpenAI's names and Anthropic's dated server tool, and nothing else", () => {
    expect(isWebSearch(responsesSearch)).toBe(true);
    expect(isWebSearch(claudeSearch)).toBe(true);
    expect(isWebSearch(claudeCode)).toBe(false);
    // An Anthropic-looking type in a Responses request is not Anthropic's tool, and the reverse.
    expect(isWebSearch({ ...claudeSearch, wire: undefined })).toBe(false);
    expect(isWebSearch({ ...responsesSearch, wire: 'anthropic' })).toBe(false);
    expect(isWebSearch({ ...claudeSearch, type: 'web_search_latest' })).toBe(false);
  });
});

describe('a Responses upstream on the canonical path', () => {
  const config = (api: 'chat' | 'responses'): OpenAIProviderConfig => ({ name: 'up', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api, api_key_env: 'K', timeouts: { connect_ms: 1_000, first_byte_ms: 1_000, idle_ms: 1_000 } });
  const provider = createOpenAIProvider(config('responses'), { K: 'sk-test' });
  const chatProvider = createOpenAIProvider(config('chat'), { K: 'sk-test' });
  afterAll(async () => {
    await provider.close?.();
    await chatProvider.close?.();
  });

  it("sends a Responses tool as sent, and Anthropic's web search as its own web_search only when mapped", () => {
    expect(responsesTool(responsesSearch, request([], false))).toBe(responsesSearch.raw);
    expect(responsesTool(claudeSearch, request([], false))).toBeUndefined();
    expect(responsesTool(claudeSearch, request([], true))).toEqual({ type: 'web_search', filters: { allowed_domains: ['example.com'] } });
    expect(responsesTool({ ...claudeSearch, raw: { type: 'web_search_20250305', allowed_domains: [3] } }, request([], true))).toEqual({ type: 'web_search' });
    expect(responsesTool(claudeCode, request([], true))).toBeUndefined();

    const mapped = request([claudeSearch, claudeCode], true);
    expect(toResponsesBody(mapped, { upstreamModel: 'gpt', maxOutputTokens: 100 }).tools).toEqual([{ type: 'web_search', filters: { allowed_domains: ['example.com'] } }]);
    expect(provider.keepsHostedTool?.(claudeSearch, mapped)).toBe(true);
    expect(provider.keepsHostedTool?.(claudeCode, mapped)).toBe(false);
    const dropped = request([claudeSearch, claudeCode], false);
    expect(toResponsesBody(dropped, { upstreamModel: 'gpt', maxOutputTokens: 100 }).tools).toBeUndefined();
    expect(provider.keepsHostedTool?.(claudeSearch, dropped)).toBe(false);
    // A Chat upstream has no web search to map to.
    expect(chatProvider.keepsHostedTool?.(claudeSearch, mapped)).toBe(false);
  });

  it('reads a web_search_call item as a web-search event, streamed and whole', async () => {
    const events = await translateAll(new ResponsesStreamTranslator(), responsesSearchStream());
    expect(shown(events)).toEqual([
      { type: 'web-search', query: SEARCH_QUERY },
      { type: 'text-delta', delta: SEARCH_TEXT },
    ]);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    const whole = {
      status: 'completed',
      output: [
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: SEARCH_QUERY } },
        // Opening a page is no search; a call without an action (older models) says nothing.
        { type: 'web_search_call', id: 'ws_2', status: 'completed', action: { type: 'open_page', url: 'https://example.com' } },
        { type: 'web_search_call', id: 'ws_3', status: 'completed' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: SEARCH_TEXT }] },
      ],
    };
    expect(shown(responsesObjectEvents(whole))).toEqual([
      { type: 'web-search', query: SEARCH_QUERY },
      { type: 'text-delta', delta: SEARCH_TEXT },
    ]);
  });
});

describe('Anthropic', () => {
  it('maps either web search to its web_search server tool only when the catalog maps hosted tools', () => {
    const call = { upstreamModel: 'claude', maxOutputTokens: 1_000 };
    expect(toMessagesBody(request([claudeSearch, claudeCode], true), call).tools).toEqual([{ type: 'web_search_20250305', name: 'web_search' }]);
    expect(toMessagesBody(request([responsesSearch], true), call).tools).toEqual([{ type: 'web_search_20250305', name: 'web_search' }]);
    expect(toMessagesBody(request([responsesSearch], false), call).tools).toBeUndefined();
  });

  it('reads the search, its results and the cited text as a web-search event and the text, never a tool call; streamed and whole', async () => {
    const expected = [
      { type: 'text-delta', delta: "I'll search. " },
      { type: 'web-search', query: SEARCH_QUERY },
      { type: 'text-delta', delta: SEARCH_TEXT },
    ];
    const events = await translateAll(new MessagesStreamTranslator(), anthropicSearchStream());
    expect(shown(events)).toEqual(expected);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(events.find((event) => event.type === 'usage')).toEqual({ type: 'usage', usage: { inputTokens: 2_100, cachedInputTokens: 0, outputTokens: 42, reasoningTokens: 0 } });
    expect(shown(messageObjectEvents(anthropicSearchMessage()))).toEqual(expected);
  });

  it('tells nothing of other server tools or of a search whose input is not a query', async () => {
    const stream = [
      { type: 'message_start', message: { usage: { input_tokens: 1, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_fetch', input: { url: 'https://example.com' } } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_search', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"query": ' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'pause_turn' }, usage: { output_tokens: 2 } },
      { type: 'message_stop' },
    ]
      .map((payload) => `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`)
      .join('');
    const events = await translateAll(new MessagesStreamTranslator(), stream);
    expect(shown(events)).toEqual([]);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });
});

describe('Gemini', () => {
  it('maps either web search to Google Search grounding only when the catalog maps hosted tools', () => {
    const none = () => undefined;
    expect(toGeminiBody(request([claudeSearch, claudeCode], true), { maxOutputTokens: 100 }, none).tools).toEqual([{ googleSearch: {} }]);
    expect(toGeminiBody(request([claudeSearch], false), { maxOutputTokens: 100 }, none).tools).toBeUndefined();
  });

  it("reads the grounding's search queries as web-search events, each once", () => {
    const translator = new GeminiStreamTranslator();
    const text = geminiGroundedStream();
    const events = text
      .split('\r\n\r\n')
      .filter((chunk) => chunk !== '')
      .flatMap((chunk) => translator.read(JSON.parse(chunk.replace(/^data: /, ''))));
    expect(shown([...events, ...(translator.endOfBody() ?? [])])).toEqual([
      { type: 'text-delta', delta: SEARCH_TEXT.slice(0, 13) },
      { type: 'text-delta', delta: SEARCH_TEXT.slice(13) },
      { type: 'web-search', query: SEARCH_QUERY },
    ]);
    const repeated = new GeminiStreamTranslator();
    const grounded = { candidates: [{ index: 0, content: { parts: [{ text: 'a' }] }, groundingMetadata: { webSearchQueries: ['q', 'q', 'r'] } }] };
    expect(shown([...repeated.read(grounded), ...repeated.read(grounded)])).toEqual([
      { type: 'text-delta', delta: 'a' },
      { type: 'web-search', query: 'q' },
      { type: 'web-search', query: 'r' },
      { type: 'text-delta', delta: 'a' },
    ]);
    // Grounding without queries, or with a malformed list, tells nothing and breaks nothing.
    const odd = new GeminiStreamTranslator();
    expect(shown(odd.read({ candidates: [{ index: 0, content: { parts: [{ text: 'b' }] }, groundingMetadata: { webSearchQueries: 'q' } }] }))).toEqual([{ type: 'text-delta', delta: 'b' }]);
  });
});
