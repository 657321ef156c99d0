/**
 * Hosted web search through translation (docs/wire-protocols.md §3.4), through the real
 * gateway onto upstream doubles speaking each vendor's wire: Codex's Responses `web_search` tool
 * mapped to Anthropic's web search and to Gemini's Google Search grounding (a `web_search_call`
 * item beside the text, proven by the official `openai` client), and Claude Code's
 * `web_search_20250305` server tool mapped to Gemini and to a Responses upstream (text alone),
 * dropped on a Chat upstream (named in `x-tollgate-dropped-tools`) or refused (Anthropic's 400).
 */
import type OpenAI from 'openai';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSse } from '../../src/lib/sse-decoder.js';
import { geminiBaseUrl } from '../../src/providers/gemini/__fixtures__/captures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startUpstreamDouble, type ReceivedRequest, type UpstreamDouble } from '../support/upstream-double.js';
import { anthropicSearchStream, geminiGroundedStream, responsesSearchStream, SEARCH_QUERY, SEARCH_TEXT } from '../support/web-search-answers.js';

const PRICES = { input: '1', output: '4' };
const CHAT_TEXT = 'Without a search: probably cold.';

function chatStream(): string {
  const chunk = (body: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'up', ...body })}\n\n`;
  return (
    chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: CHAT_TEXT }, finish_reason: null }] }) +
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
    chunk({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } }) +
    'data: [DONE]\n\n'
  );
}

/** One double for every vendor, answering by the path each provider calls. */
function answer(request: ReceivedRequest, response: ServerResponse): void {
  const body = request.path.startsWith('/v1/messages')
    ? anthropicSearchStream()
    : request.path.includes(':streamGenerateContent')
      ? geminiGroundedStream()
      : request.path.startsWith('/v1/responses')
        ? responsesSearchStream()
        : chatStream();
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(body);
}

const timeouts = { first_byte_ms: 2_000, idle_ms: 2_000 };

function model(id: string, provider: string, hostedTools: 'drop' | 'refuse' | 'map'): Record<string, unknown> {
  return { id, prices: PRICES, max_output_tokens: 1_024, hosted_tools: hostedTools, targets: [{ provider, model: `up-${provider}` }] };
}

async function sseEvents(response: Response): Promise<Array<{ event: string | undefined; data: Record<string, unknown> }>> {
  const text = await response.text();
  const out: Array<{ event: string | undefined; data: Record<string, unknown> }> = [];
  for await (const sse of decodeSse((async function* () {
    yield Buffer.from(text);
  })())) out.push({ event: sse.event, data: JSON.parse(sse.data) as Record<string, unknown> });
  return out;
}

describe('hosted web search through translation', () => {
  let upstream: UpstreamDouble;
  let harness: Harness;
  let client: OpenAI;
  let secret: string;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(answer);
    harness = await startHarness({
      catalog: {
        providers: [
          { name: 'claude', type: 'anthropic', base_url: upstream.baseUrl, api_key_env: 'TEST_ANTHROPIC_KEY', timeouts },
          { name: 'gemini', type: 'gemini', base_url: geminiBaseUrl(upstream), api_key_env: 'TEST_GEMINI_KEY', timeouts },
          { name: 'chat', type: 'openai', api: 'chat', base_url: upstream.baseUrl, api_key_env: 'TEST_OPENAI_KEY', timeouts },
          { name: 'responses', type: 'openai', api: 'responses', base_url: upstream.baseUrl, api_key_env: 'TEST_OPENAI_KEY', timeouts },
        ],
        models: [
          model('claude-map', 'claude', 'map'),
          model('gemini-map', 'gemini', 'map'),
          model('chat-drop', 'chat', 'drop'),
          model('chat-refuse', 'chat', 'refuse'),
          model('chat-map', 'chat', 'map'),
          model('responses-map', 'responses', 'map'),
        ],
      },
      env: { TEST_ANTHROPIC_KEY: 'sk-ant-test', TEST_GEMINI_KEY: 'AIzaSyTestKey', TEST_OPENAI_KEY: 'sk-test' },
    });
    ({ secret } = await harness.newAccount('10'));
    client = harness.client(secret);
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  const lastSent = (): ReceivedRequest => upstream.requests.at(-1)!;
  const messages = (body: Record<string, unknown>) => harness.post('/v1/messages', body, null, { 'anthropic-version': '2023-06-01', 'x-api-key': secret });
  const claudeCodeSearch = (modelId: string, extra: Record<string, unknown> = {}) => ({
    model: modelId,
    max_tokens: 512,
    messages: [{ role: 'user', content: `Perform a web search for the query: ${SEARCH_QUERY}` }],
    tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 8 }],
    ...extra,
  });

  describe('a Responses client (Codex) with web_search', () => {
    it("on Anthropic with map: Anthropic's web search runs; a completed web_search_call item, then the cited text", async () => {
      const { data: response, response: raw } = await client.responses.create({ model: 'claude-map', input: 'Weather in Oslo?', tools: [{ type: 'web_search' }] }).withResponse();
      expect(raw.headers.get('x-tollgate-dropped-tools')).toBeNull();
      expect(lastSent().body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search' }]);
      expect(response.output.map((item) => item.type)).toEqual(['message', 'web_search_call', 'message']);
      expect(response.output[1]).toMatchObject({ type: 'web_search_call', status: 'completed', action: { type: 'search', query: SEARCH_QUERY } });
      expect(response.output[1]!.id).toMatch(/^ws_/);
      expect(response.output_text).toBe(`I'll search. ${SEARCH_TEXT}`);
      expect(response.output.some((item) => item.type === 'function_call')).toBe(false);
      expect(response.status).toBe('completed');
      expect(response.usage).toMatchObject({ input_tokens: 2_100, output_tokens: 42 });
    });

    it('on Anthropic with map, streamed: the SDK accumulates the same items from the web_search_call events', async () => {
      const stream = client.responses.stream({ model: 'claude-map', input: 'Weather in Oslo?', tools: [{ type: 'web_search' }] });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      const response = await stream.finalResponse();
      expect(types).toEqual(expect.arrayContaining(['response.web_search_call.in_progress', 'response.web_search_call.searching', 'response.web_search_call.completed']));
      expect(types.indexOf('response.web_search_call.completed')).toBeLessThan(types.lastIndexOf('response.output_text.delta'));
      expect(response.output.map((item) => item.type)).toEqual(['message', 'web_search_call', 'message']);
      expect(response.output[1]).toMatchObject({ status: 'completed', action: { type: 'search', query: SEARCH_QUERY } });
      expect(response.output_text).toBe(`I'll search. ${SEARCH_TEXT}`);
    });

    it("on Gemini with map: Google Search grounding; the grounding's query as a web_search_call item beside the text", async () => {
      const response = await client.responses.create({ model: 'gemini-map', input: 'Weather in Oslo?', tools: [{ type: 'web_search' }] });
      expect(lastSent().path).toContain(':streamGenerateContent');
      expect(lastSent().body.tools).toEqual([{ googleSearch: {} }]);
      expect(response.output_text).toBe(SEARCH_TEXT);
      const searches = response.output.filter((item) => item.type === 'web_search_call');
      expect(searches).toHaveLength(1);
      expect(searches[0]).toMatchObject({ status: 'completed', action: { type: 'search', query: SEARCH_QUERY } });

      const stream = client.responses.stream({ model: 'gemini-map', input: 'Weather in Oslo?', tools: [{ type: 'web_search' }] });
      const streamed = await stream.finalResponse();
      expect(streamed.output.map((item) => item.type)).toEqual(['message', 'web_search_call']);
      expect(streamed.output_text).toBe(SEARCH_TEXT);
    });
  });

  describe('a Messages client (Claude Code) with web_search_20250305', () => {
    it('on a Chat route with drop: left out, named in x-tollgate-dropped-tools with the other server tools; the answer is a plain message', async () => {
      const response = await messages(claudeCodeSearch('chat-drop', { tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 8 }, { type: 'code_execution_20250522', name: 'code_execution' }] }));
      expect(response.status).toBe(200);
      expect(response.headers.get('x-tollgate-dropped-tools')).toBe('web_search_20250305,code_execution_20250522');
      expect(lastSent().path).toBe('/v1/chat/completions');
      expect(lastSent().body.tools).toBeUndefined();
      const body = (await response.json()) as { content: Array<{ type: string; text?: string }>; stop_reason: string };
      expect(body.content).toEqual([{ type: 'text', text: CHAT_TEXT }]);
      expect(body.stop_reason).toBe('end_turn');
    });

    it('on a Chat route with map: a Chat upstream has no web search, so it is dropped and named all the same', async () => {
      const response = await messages(claudeCodeSearch('chat-map', { stream: true }));
      expect(response.status).toBe(200);
      expect(response.headers.get('x-tollgate-dropped-tools')).toBe('web_search_20250305');
      const events = await sseEvents(response);
      expect(events.at(-1)?.event).toBe('message_stop');
    });

    it("on a Chat route with refuse: Anthropic's 400, saying which tool and why", async () => {
      const before = upstream.requests.length;
      const response = await messages(claudeCodeSearch('chat-refuse'));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message:
            "tools[0].type: The server tool 'web_search_20250305' is not supported with this model, whose route does not run Anthropic's server tools. Remove it from `tools`, or use a model served by Anthropic.",
        },
      });
      expect(upstream.requests.length).toBe(before);
    });

    it("on Gemini with map: Google Search grounding; the client gets text blocks only, streamed and not", async () => {
      const whole = await messages(claudeCodeSearch('gemini-map'));
      expect(whole.status).toBe(200);
      expect(whole.headers.get('x-tollgate-dropped-tools')).toBeNull();
      expect(lastSent().body.tools).toEqual([{ googleSearch: {} }]);
      const body = (await whole.json()) as { content: Array<{ type: string; text?: string }>; stop_reason: string };
      expect(body.content).toEqual([{ type: 'text', text: SEARCH_TEXT }]);
      expect(body.stop_reason).toBe('end_turn');

      const streamed = await sseEvents(await messages(claudeCodeSearch('gemini-map', { stream: true })));
      const blocks = streamed.filter((event) => event.event === 'content_block_start').map((event) => (event.data.content_block as { type: string }).type);
      expect(blocks).toEqual(['text']);
      const text = streamed.flatMap((event) => (event.event === 'content_block_delta' ? [(event.data.delta as { text: string }).text] : [])).join('');
      expect(text).toBe(SEARCH_TEXT);
      expect(streamed.at(-1)?.event).toBe('message_stop');
    });

    it("on a Responses upstream with map: Responses' own web_search runs; its web_search_call item comes back as text alone", async () => {
      const response = await messages(claudeCodeSearch('responses-map', { tools: [{ type: 'web_search_20250305', name: 'web_search', allowed_domains: ['weather.example'] }] }));
      expect(response.status).toBe(200);
      expect(lastSent().path).toBe('/v1/responses');
      expect(lastSent().body.tools).toEqual([{ type: 'web_search', filters: { allowed_domains: ['weather.example'] } }]);
      const body = (await response.json()) as { content: Array<{ type: string; text?: string }> };
      expect(body.content).toEqual([{ type: 'text', text: SEARCH_TEXT }]);
    });
  });
});
