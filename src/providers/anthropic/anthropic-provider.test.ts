import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { AnthropicProviderConfig } from '../../config/schema.js';
import type { CanonicalEvent, CanonicalRequest } from '../../protocol/canonical.js';
import { countTextTokens } from '../../protocol/tokens.js';
import type { Provider, ProviderCall } from '../provider.js';
import { collect, expectNoSecrets, providerTestKit, upstreamFailure } from '../../../test/support/provider-test-kit.js';
import { firstEvents, json, sse, sseThen, type UpstreamDouble } from '../../../test/support/upstream-double.js';
import { createAnthropicProvider } from './anthropic-provider.js';
import { fixture } from './__fixtures__/fixtures.js';

const SECRET = 'sk-ant-api03-T0llgateUpstreamSecret-9f2c';
const KEY_ENV = 'TOLLGATE_TEST_ANTHROPIC_KEY';
const ENV = { [KEY_ENV]: SECRET };
const UPSTREAM_MODEL = 'claude-sonnet-4-5-20250929';
const START: CanonicalEvent = { type: 'response-start', upstreamModel: UPSTREAM_MODEL };

const weather = { name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

/** A tool round trip's second turn: system prompts, an image, two calls, their outputs, a follow-up. */
const CONVERSATION: CanonicalRequest = {
  model: 'tollgate-claude',
  instructions: 'Answer tersely.',
  input: [
    { type: 'message', role: 'system', content: [{ type: 'text', text: 'Use metric units.' }] },
    { type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and Rome?' }] },
    { type: 'message', role: 'user', content: [{ type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' }, { type: 'image', url: 'https://example.com/map.jpg' }] },
    { type: 'message', role: 'assistant', content: [{ type: 'text', text: "I'll check both cities." }] },
    { type: 'function_call', callId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'weather', arguments: '{"city":"Oslo"}' },
    { type: 'function_call', callId: 'toolu_01CAyFxQaWdTPqzhPDxb6N3K', name: 'weather', arguments: '{"city":"Rome"' },
    { type: 'message', role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] },
    { type: 'function_call_output', callId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', output: '-3C, snow' },
    { type: 'function_call_output', callId: 'toolu_01CAyFxQaWdTPqzhPDxb6N3K', output: '18C, sun' },
    { type: 'message', role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
  ],
  tools: [weather, { name: 'clock' }],
  toolChoice: 'auto',
  parallelToolCalls: false,
  temperature: 1.4,
  topP: 0.9,
  stream: true,
};

const SIMPLE: CanonicalRequest = {
  model: 'tollgate-claude',
  input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and Rome?' }] }],
  tools: [],
  toolChoice: 'auto',
  stream: true,
};

const kit = providerTestKit();
const upstream = kit.upstream;

function provider(double: UpstreamDouble, overrides: Partial<AnthropicProviderConfig> = {}): Provider {
  const config: AnthropicProviderConfig = {
    name: 'anthropic-primary',
    type: 'anthropic',
    base_url: double.baseUrl,
    api_key_env: KEY_ENV,
    version: '2023-06-01',
    timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 },
    ...overrides,
  };
  const created = createAnthropicProvider(config, ENV);
  return kit.track(created);
}

function call(overrides: Partial<ProviderCall> = {}): ProviderCall {
  return { upstreamModel: UPSTREAM_MODEL, maxOutputTokens: 4_096, signal: new AbortController().signal, requestId: 'req_tollgate_0001', ...overrides };
}


function expectNoLeak(text: string | undefined, double: UpstreamDouble): void {
  expectNoSecrets(text, [SECRET, double.baseUrl]);
}

describe('createAnthropicProvider: the Messages request', () => {
  it('sends the headers and the mapped conversation: system prompt, merged roles, tool_use and tool_result blocks', async () => {
    const double = await upstream(sse(fixture('text-stream.sse')));
    await collect(provider(double).stream(CONVERSATION, call()));

    expect(double.requests).toHaveLength(1);
    const [received] = double.requests;
    expect(received?.method).toBe('POST');
    expect(received?.path).toBe('/v1/messages');
    expect(received?.headers['x-api-key']).toBe(SECRET);
    expect(received?.headers['anthropic-version']).toBe('2023-06-01');
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.headers.authorization).toBeUndefined();
    expect(received?.body).toEqual({
      model: UPSTREAM_MODEL,
      max_tokens: 4_096,
      system: [
        { type: 'text', text: 'Answer tersely.' },
        { type: 'text', text: 'Use metric units.' },
        // The gateway's prompt-cache breakpoints: the end of the tools and system, and the last block.
        { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Oslo and Rome?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/map.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: "I'll check both cities." },
            { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'weather', input: { city: 'Oslo' } },
            // Arguments that are not valid JSON are sent as an empty input.
            { type: 'tool_use', id: 'toolu_01CAyFxQaWdTPqzhPDxb6N3K', name: 'weather', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', content: '-3C, snow' },
            { type: 'tool_result', tool_use_id: 'toolu_01CAyFxQaWdTPqzhPDxb6N3K', content: '18C, sun' },
            { type: 'text', text: 'And tomorrow?', cache_control: { type: 'ephemeral' } },
          ],
        },
      ],
      tools: [
        { name: 'weather', description: 'Current weather', input_schema: weather.parameters },
        { name: 'clock', input_schema: { type: 'object', properties: {} } },
      ],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      // Clamped to Anthropic's 0–1 range.
      temperature: 1,
      top_p: 0.9,
      stream: true,
    });
  });

  it('enables thinking for a reasoning effort, with the table budget and without temperature or top_p', async () => {
    const double = await upstream(sse(fixture('thinking-stream.sse')));
    await collect(provider(double).stream({ ...SIMPLE, reasoningEffort: 'low', temperature: 0.5, topP: 0.9 }, call({ maxOutputTokens: 16_000 })));
    const body = double.requests[0]?.body;
    expect(body?.thinking).toEqual({ type: 'enabled', budget_tokens: 2_048 });
    expect(body?.max_tokens).toBe(16_000);
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('top_p');
  });

  it('keeps the thinking budget below max_tokens', async () => {
    const double = await upstream(sse(fixture('thinking-stream.sse')));
    await collect(provider(double).stream({ ...SIMPLE, reasoningEffort: 'high' }, call({ maxOutputTokens: 4_096 })));
    expect(double.requests[0]?.body.thinking).toEqual({ type: 'enabled', budget_tokens: 3_072 });
  });

  it('sends no thinking when max_tokens is too small for it, and then keeps temperature', async () => {
    const double = await upstream(sse(fixture('text-stream.sse')));
    await collect(provider(double).stream({ ...SIMPLE, reasoningEffort: 'max', temperature: 0.5 }, call({ maxOutputTokens: 2_000 })));
    expect(double.requests[0]?.body).not.toHaveProperty('thinking');
    expect(double.requests[0]?.body.temperature).toBe(0.5);
  });

  it('sends no x-api-key when no key is configured, and the configured version', async () => {
    const double = await upstream(sse(fixture('text-stream.sse')));
    await collect(provider(double, { api_key_env: undefined, version: '2026-01-15' }).stream(SIMPLE, call()));
    expect(double.requests[0]?.headers['x-api-key']).toBeUndefined();
    expect(double.requests[0]?.headers['anthropic-version']).toBe('2026-01-15');
  });

  it('refuses an image Anthropic cannot take before calling the upstream, as a non-failoverable 400', async () => {
    const double = await upstream(sse(fixture('text-stream.sse')));
    const request: CanonicalRequest = { ...SIMPLE, input: [{ type: 'message', role: 'user', content: [{ type: 'image', url: 'data:image/svg+xml;base64,PHN2Zz4=' }] }] };
    const error = await upstreamFailure(collect(provider(double).stream(request, call())));
    expect(error.kind).toBe('status');
    expect(error.status).toBe(400);
    expect(error.failoverable).toBe(false);
    expect(error.clientMessage).toMatch(/image/);
    expect(double.requests).toHaveLength(0);
  });
});

describe('createAnthropicProvider: the event stream', () => {
  it('maps a text stream; usage counts cache reads and writes as input, each also on its own', async () => {
    const double = await upstream(sse(fixture('text-stream.sse'), 7));
    const events = await collect(provider(double).stream(SIMPLE, call()));
    expect(events).toEqual([
      START,
      // What Anthropic read, known from message_start (billed if the answer ends without a report).
      { type: 'input-usage', usage: { inputTokens: 14 + 2_048 + 312, cachedInputTokens: 2_048, cacheWriteInputTokens: 312 } },
      { type: 'text-delta', delta: 'Oslo is' },
      { type: 'text-delta', delta: ' snowy ❄️' },
      { type: 'text-delta', delta: ' and Rome' },
      { type: 'text-delta', delta: ' is sunny.' },
      { type: 'usage', usage: { inputTokens: 14 + 2_048 + 312, cachedInputTokens: 2_048, cacheWriteInputTokens: 312, outputTokens: 12, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('maps two parallel tool_use blocks to tool calls 0 and 1 with their toolu_ ids', async () => {
    const double = await upstream(sse(fixture('tool-use-stream.sse'), 64));
    const events = await collect(provider(double).stream({ ...SIMPLE, tools: [weather] }, call()));
    expect(events).toEqual([
      START,
      { type: 'input-usage', usage: { inputTokens: 472, cachedInputTokens: 0 } },
      { type: 'text-delta', delta: "I'll check both cities." },
      { type: 'tool-call-start', index: 0, callId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'weather' },
      { type: 'tool-call-delta', index: 0, delta: '{"city": ' },
      { type: 'tool-call-delta', index: 0, delta: '"Oslo"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, callId: 'toolu_01CAyFxQaWdTPqzhPDxb6N3K', name: 'weather' },
      { type: 'tool-call-delta', index: 1, delta: '{"city": "Ro' },
      { type: 'tool-call-delta', index: 1, delta: 'me"}' },
      { type: 'tool-call-end', index: 1 },
      { type: 'usage', usage: { inputTokens: 472, cachedInputTokens: 0, outputTokens: 89, reasoningTokens: 0 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('maps thinking to reasoning deltas, ignores the signature, and estimates reasoning tokens from the thinking text', async () => {
    const double = await upstream(sse(fixture('thinking-stream.sse'), 50));
    const events = await collect(provider(double).stream({ ...SIMPLE, reasoningEffort: 'low' }, call()));
    const thinking = ['The user asks for 27 * 453. Let me compute:', ' 27 * 400 = 10800, 27 * 53 = 1431, so 12231.'];
    expect(events).toEqual([
      START,
      { type: 'input-usage', usage: { inputTokens: 36, cachedInputTokens: 0 } },
      { type: 'reasoning-delta', delta: thinking[0] },
      { type: 'reasoning-delta', delta: thinking[1] },
      { type: 'text-delta', delta: '27 × 453 = 12,231.' },
      { type: 'usage', usage: { inputTokens: 36, cachedInputTokens: 0, outputTokens: 58, reasoningTokens: countTextTokens(thinking.join('')) } },
      { type: 'finish', reason: 'stop' },
    ]);
    const usage = events.find((event) => event.type === 'usage');
    expect(usage?.type === 'usage' && usage.usage.reasoningTokens).toBeGreaterThan(10);
  });

  it('caps estimated reasoning tokens at the output tokens', async () => {
    const capture = fixture('thinking-stream.sse').replace('"usage":{"output_tokens":58}', '"usage":{"output_tokens":5}');
    const double = await upstream(sse(capture));
    const events = await collect(provider(double).stream(SIMPLE, call()));
    expect(events).toContainEqual({ type: 'usage', usage: { inputTokens: 36, cachedInputTokens: 0, outputTokens: 5, reasoningTokens: 5 } });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
  ])('maps stop_reason %s to finish %s', async (stopReason, finish) => {
    const capture = fixture('text-stream.sse').replace('"stop_reason":"end_turn"', `"stop_reason":"${stopReason}"`);
    const double = await upstream(sse(capture));
    const events = await collect(provider(double).stream(SIMPLE, call()));
    expect(events.at(-1)).toEqual({ type: 'finish', reason: finish });
  });

  it('reads a whole Message when the upstream answers JSON although asked to stream', async () => {
    const double = await upstream(json(200, fixture('message.json')));
    const events = await collect(provider(double).stream(SIMPLE, call()));
    expect(events).toEqual([
      START,
      { type: 'text-delta', delta: 'Let me check.' },
      { type: 'tool-call-start', index: 0, callId: 'toolu_01A09q90qw90lq917835lq9', name: 'weather' },
      { type: 'tool-call-delta', index: 0, delta: '{"city":"Rome"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'usage', usage: { inputTokens: 2_458, cachedInputTokens: 2_048, outputTokens: 96, reasoningTokens: 0 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });
});

describe('createAnthropicProvider: failures before the 200', () => {
  it('maps a 400 invalid_request_error to a status error carrying Anthropic\'s message', async () => {
    const double = await upstream(json(400, fixture('error-400.json')));
    const error = await upstreamFailure(collect(provider(double).stream(SIMPLE, call())));
    expect(error.kind).toBe('status');
    expect(error.status).toBe(400);
    expect(error.failoverable).toBe(false);
    expect(error.clientMessage).toBe('max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929');
    expect(error.message).toContain('anthropic-primary');
    expect(error.message).toContain('400');
  });

  it('keeps the address and the key out of a 400 that echoes them', async () => {
    const double = await upstream(json(400, ''));
    const echo = { type: 'error', error: { type: 'invalid_request_error', message: `bad request to ${double.baseUrl}/messages with key ${SECRET}` } };
    double.answer(json(400, JSON.stringify(echo)));
    const error = await upstreamFailure(collect(provider(double).stream(SIMPLE, call())));
    expect(error.clientMessage).toContain('bad request to [upstream]/messages with key [redacted]');
    expectNoLeak(error.clientMessage, double);
    expectNoLeak(error.message, double);
  });

  it.each([401, 403])('maps a %i to a credentials error', async (status) => {
    const double = await upstream(json(status, fixture('error-401.json')));
    const error = await upstreamFailure(collect(provider(double).stream(SIMPLE, call())));
    expect(error.kind).toBe('credentials');
    expect(error.status).toBe(status);
    expect(error.clientMessage).toBeUndefined();
    expect(error.failoverable).toBe(true);
  });

  it.each([
    [429, 'error-429.json'],
    [529, 'error-529.json'],
    [500, 'error-500.json'],
  ] as const)('maps a %i to a failoverable status error', async (status, name) => {
    const double = await upstream(json(status, fixture(name)));
    const error = await upstreamFailure(collect(provider(double).stream(SIMPLE, call())));
    expect(error.kind).toBe('status');
    expect(error.status).toBe(status);
    expect(error.failoverable).toBe(true);
    expect(error.message).toContain(String(status));
  });
});

describe('createAnthropicProvider: failures after the 200', () => {
  const head = firstEvents(fixture('text-stream.sse'), 4);

  async function eventsAfter(then: (response: ServerResponse) => void): Promise<CanonicalEvent[]> {
    const double = await upstream(sseThen(head, then));
    return collect(provider(double).stream(SIMPLE, call()));
  }

  it('ends with the in-band error event, without usage or finish', async () => {
    const double = await upstream(sse(fixture('error-mid-stream.sse')));
    const events = await collect(provider(double).stream(SIMPLE, call()));
    expect(events).toEqual([
      START,
      { type: 'input-usage', usage: { inputTokens: 21, cachedInputTokens: 0 } },
      { type: 'text-delta', delta: 'Once upon' },
      { type: 'error', code: 'upstream_error', message: 'Overloaded' },
    ]);
  });

  it('keeps the address and key out of an in-band error', async () => {
    const double = await upstream(json(200, ''));
    const error = { type: 'error', error: { type: 'api_error', message: `failed at ${double.baseUrl} for ${SECRET}` } };
    double.answer(sseThen(head, (response) => response.end(`event: error\ndata: ${JSON.stringify(error)}\n\n`)));
    const events = await collect(provider(double).stream(SIMPLE, call()));
    const last = events.at(-1);
    expect(last).toMatchObject({ type: 'error', code: 'upstream_error' });
    expectNoLeak(last?.type === 'error' ? last.message : '', double);
  });

  it('ends with an error event on an event that is not JSON', async () => {
    const events = await eventsAfter((response) => response.end('event: content_block_delta\ndata: {"type":"content_block_delta",\n\n'));
    expect(events.at(-1)).toEqual({ type: 'error', code: 'upstream_error', message: 'The upstream sent a stream event that is not JSON.' });
  });

  it('finishes normally when the body ends after message_delta without message_stop', async () => {
    const capture = fixture('text-stream.sse');
    const withoutStop = capture.slice(0, capture.indexOf('event: message_stop'));
    const events = await eventsAfter((response) => response.end(withoutStop.slice(head.length)));
    expect(events.slice(-2)).toEqual([
      { type: 'usage', usage: { inputTokens: 2_374, cachedInputTokens: 2_048, cacheWriteInputTokens: 312, outputTokens: 12, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });
});

describe('createAnthropicProvider: configuration', () => {
  it("speaks Anthropic's Messages surface natively, and neither OpenAI surface", async () => {
    const double = await upstream(sse(''));
    const created = provider(double);
    expect(created.passthrough).toBeTypeOf('function');
    expect(created.speaksNatively?.('anthropic-messages')).toBe(true);
    expect(created.speaksNatively?.('chat-completions')).toBe(false);
    expect(created.speaksNatively?.('responses')).toBe(false);
  });

  it('refuses to start when the key variable is configured but unset', () => {
    const config: AnthropicProviderConfig = {
      name: 'anthropic-primary',
      type: 'anthropic',
      base_url: 'http://127.0.0.1:9/v1',
      api_key_env: 'TOLLGATE_TEST_MISSING_KEY',
      version: '2023-06-01',
      timeouts: { connect_ms: 1_000, first_byte_ms: 1_000, idle_ms: 1_000 },
    };
    expect(() => createAnthropicProvider(config, {})).toThrow(/TOLLGATE_TEST_MISSING_KEY/);
  });
});
