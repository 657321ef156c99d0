import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { GeminiProviderConfig } from '../../config/schema.js';
import type { CanonicalEvent, CanonicalRequest } from '../../protocol/canonical.js';
import { collect, expectNoSecrets, providerTestKit, upstreamFailure } from '../../../test/support/provider-test-kit.js';
import { json, sse, sseThen, type UpstreamDouble } from '../../../test/support/upstream-double.js';
import type { Provider, ProviderCall } from '../provider.js';
import { capture, captureEvents, geminiBaseUrl } from './__fixtures__/captures.js';
import { createGeminiProvider, streamPath } from './gemini-provider.js';
import { SKIP_SIGNATURE_CHECK } from './request-body.js';

const SECRET = 'AIzaSyT0llgateUpstreamSecret8c1fQ';
const KEY_ENV = 'TOLLGATE_TEST_GEMINI_KEY';
const ENV = { [KEY_ENV]: SECRET };
const UPSTREAM_MODEL = 'gemini-2.5-flash';

const REQUEST: CanonicalRequest = {
  model: 'tollgate-gemini',
  instructions: 'Answer tersely.',
  input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and Rome?' }] }],
  tools: [
    {
      name: 'weather',
      description: 'Current weather',
      parameters: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { city: { type: 'string', format: 'uri' } }, required: ['city'], additionalProperties: false },
      strict: true,
    },
  ],
  toolChoice: 'auto',
  parallelToolCalls: true,
  maxOutputTokens: 5_000,
  temperature: 0.2,
  stream: true,
};

const kit = providerTestKit();
const upstream = kit.upstream;

function provider(double: UpstreamDouble | string, overrides: Partial<GeminiProviderConfig> = {}): Provider {
  const config: GeminiProviderConfig = {
    name: 'gemini-primary',
    type: 'gemini',
    base_url: typeof double === 'string' ? double : geminiBaseUrl(double),
    api_key_env: KEY_ENV,
    timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 },
    ...overrides,
  };
  const created = createGeminiProvider(config, ENV);
  return kit.track(created);
}

function call(overrides: Partial<ProviderCall> = {}): ProviderCall {
  return { upstreamModel: UPSTREAM_MODEL, maxOutputTokens: 1_000, signal: new AbortController().signal, requestId: 'req_tollgate_0001', ...overrides };
}


function expectNoLeak(text: string | undefined, double: UpstreamDouble): void {
  expectNoSecrets(text, [SECRET, geminiBaseUrl(double)]);
}

function toolCallEvents(events: CanonicalEvent[]): Array<Extract<CanonicalEvent, { type: 'tool-call-start' }>> {
  return events.filter((event): event is Extract<CanonicalEvent, { type: 'tool-call-start' }> => event.type === 'tool-call-start');
}

describe('createGeminiProvider: the request', () => {
  it('posts to :streamGenerateContent?alt=sse with the key in x-goog-api-key only', async () => {
    const double = await upstream(sse(capture('text-stream.sse')));
    await collect(provider(double).stream(REQUEST, call()));

    expect(double.requests).toHaveLength(1);
    const [received] = double.requests;
    expect(received?.method).toBe('POST');
    expect(received?.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(received?.path).not.toContain(SECRET);
    expect(received?.path).not.toContain('key=');
    expect(received?.headers['x-goog-api-key']).toBe(SECRET);
    expect(received?.headers.authorization).toBeUndefined();
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.headers.accept).toBe('text/event-stream');
    expect(received?.body).toEqual({
      systemInstruction: { parts: [{ text: 'Answer tersely.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Weather in Oslo and Rome?' }] }],
      tools: [
        {
          functionDeclarations: [
            { name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      generationConfig: { maxOutputTokens: 1_000, temperature: 0.2 },
    });
  });

  it('sends no key header when no key is configured', async () => {
    const double = await upstream(sse(capture('text-stream.sse')));
    await collect(provider(double, { api_key_env: undefined }).stream(REQUEST, call()));
    expect(double.requests[0]?.headers['x-goog-api-key']).toBeUndefined();
  });

  it('maps reasoning effort to a thinking budget with thoughts included', async () => {
    const double = await upstream(sse(capture('thinking-stream.sse')));
    await collect(provider(double).stream({ ...REQUEST, reasoningEffort: 'medium' }, call({ maxOutputTokens: 16_000 })));
    expect(double.requests[0]?.body.generationConfig).toEqual({ maxOutputTokens: 16_000, temperature: 0.2, thinkingConfig: { thinkingBudget: 8_192, includeThoughts: true } });
  });

  it('turns a model name given as models/… into the right path', () => {
    expect(streamPath('models/gemini-2.5-pro')).toBe('/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
    expect(streamPath('gemini-2.5-pro')).toBe('/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
  });

  it('answers a 400 without calling the upstream when an output has no matching call', async () => {
    const double = await upstream(sse(capture('text-stream.sse')));
    const orphan: CanonicalRequest = { ...REQUEST, input: [...REQUEST.input, { type: 'function_call_output', callId: 'call_unknown', output: '6°C' }] };
    const error = await upstreamFailure(collect(provider(double).stream(orphan, call())));
    expect(error.kind).toBe('status');
    expect(error.status).toBe(400);
    expect(error.failoverable).toBe(false);
    expect(error.clientMessage).toContain("call_id 'call_unknown'");
    expect(double.requests).toHaveLength(0);
  });
});

describe('createGeminiProvider: events and usage', () => {
  it('streams text with the last usage, cached tokens included, split at every few bytes', async () => {
    const double = await upstream(sse(capture('text-stream.sse'), 7));
    const events = await collect(provider(double).stream(REQUEST, call()));

    expect(events).toEqual([
      { type: 'response-start', upstreamModel: UPSTREAM_MODEL },
      { type: 'text-delta', delta: 'Rainy harbor' },
      { type: 'text-delta', delta: ' in Bergen, 6°C ☔' },
      { type: 'text-delta', delta: ' and a light wind.' },
      { type: 'usage', usage: { inputTokens: 1290, cachedInputTokens: 1024, outputTokens: 137, reasoningTokens: 120 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('streams thought summaries as reasoning and counts thoughts as output', async () => {
    const double = await upstream(sse(capture('thinking-stream.sse'), 50));
    const events = await collect(provider(double).stream({ ...REQUEST, reasoningEffort: 'low' }, call()));

    expect(events).toEqual([
      { type: 'response-start', upstreamModel: UPSTREAM_MODEL },
      { type: 'reasoning-delta', delta: "**Counting the letters**\n\nI'm spelling out strawberry and marking each r." },
      { type: 'reasoning-delta', delta: '**Double-checking**\n\nTwo in the "rr", one after the t.' },
      { type: 'text-delta', delta: 'There are **3** "r"s in' },
      { type: 'text-delta', delta: ' strawberry.' },
      { type: 'usage', usage: { inputTokens: 9, cachedInputTokens: 0, outputTokens: 270, reasoningTokens: 256 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('streams two parallel calls, each whole, with fresh distinct call ids', async () => {
    const double = await upstream(sse(capture('parallel-tool-calls-stream.sse')));
    const events = await collect(provider(double).stream(REQUEST, call()));
    const [first, second] = toolCallEvents(events);

    expect(first?.callId).toMatch(/^call_[0-9a-f]{24}$/);
    expect(second?.callId).toMatch(/^call_[0-9a-f]{24}$/);
    expect(first?.callId).not.toBe(second?.callId);
    expect(events).toEqual([
      { type: 'response-start', upstreamModel: UPSTREAM_MODEL },
      { type: 'tool-call-start', index: 0, callId: first?.callId, name: 'weather' },
      { type: 'tool-call-delta', index: 0, delta: '{"city":"Oslo"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, callId: second?.callId, name: 'local_time' },
      { type: 'tool-call-delta', index: 1, delta: '{"city":"Rome","format":"24h"}' },
      { type: 'tool-call-end', index: 1 },
      { type: 'usage', usage: { inputTokens: 95, cachedInputTokens: 0, outputTokens: 216, reasoningTokens: 176 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('sends the calls back next turn with their signature, names on the responses, roles merged', async () => {
    const double = await upstream(sse(capture('parallel-tool-calls-stream.sse')));
    const gemini = provider(double);
    const [oslo, rome] = toolCallEvents(await collect(gemini.stream(REQUEST, call())));
    double.answer(sse(capture('text-stream.sse')));

    const nextTurn: CanonicalRequest = {
      ...REQUEST,
      input: [
        ...REQUEST.input,
        { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Checking both.' }] },
        { type: 'function_call', callId: oslo?.callId ?? '', name: 'weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call', callId: rome?.callId ?? '', name: 'local_time', arguments: '{"city":"Rome","format":"24h"}' },
        { type: 'function_call_output', callId: rome?.callId ?? '', output: '14:02' },
        { type: 'function_call_output', callId: oslo?.callId ?? '', output: '-3°C, snow' },
      ],
    };
    await collect(gemini.stream(nextTurn, call()));

    const sent = double.requests[1]?.body.contents;
    const signature = /"thoughtSignature":"([^"]+)"/.exec(capture('parallel-tool-calls-stream.sse'))?.[1];
    expect(signature).toBeDefined();
    expect(sent).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Oslo and Rome?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking both.' },
          { functionCall: { name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: signature },
          { functionCall: { name: 'local_time', args: { city: 'Rome', format: '24h' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'local_time', response: { result: '14:02' } } },
          { functionResponse: { name: 'weather', response: { result: '-3°C, snow' } } },
        ],
      },
    ]);
  });

  it('replays a call this provider never made with the documented skip signature', async () => {
    const double = await upstream(sse(capture('text-stream.sse')));
    const foreign: CanonicalRequest = {
      ...REQUEST,
      input: [
        ...REQUEST.input,
        { type: 'function_call', callId: 'call_from_elsewhere', name: 'weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', callId: 'call_from_elsewhere', output: 'sunny' },
      ],
    };
    await collect(provider(double).stream(foreign, call()));
    expect(double.requests[0]?.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Oslo and Rome?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: SKIP_SIGNATURE_CHECK }] },
      { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { result: 'sunny' } } }] },
    ]);
  });

  it('reads a whole JSON answer when the upstream does not stream', async () => {
    const chunks = captureEvents(capture('text-stream.sse')).map((event) => JSON.parse(event.slice('data: '.length)) as unknown);
    const double = await upstream(json(200, JSON.stringify(chunks)));
    const events = await collect(provider(double).stream(REQUEST, call()));
    expect(events.filter((event) => event.type === 'text-delta')).toHaveLength(3);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });
});

describe('createGeminiProvider: failures before the 200', () => {
  it('maps a 400 INVALID_ARGUMENT to a status error whose client message is free of the address and key', async () => {
    const double = await upstream(json(400, ''));
    double.answer(json(400, capture('error-400.json', { baseUrl: geminiBaseUrl(double), apiKey: SECRET })));
    const error = await upstreamFailure(collect(provider(double).stream(REQUEST, call())));

    expect(error.kind).toBe('status');
    expect(error.status).toBe(400);
    expect(error.failoverable).toBe(false);
    expect(error.clientMessage).toContain("only 'enum' and 'date-time' are supported for STRING type");
    expectNoLeak(error.clientMessage, double);
    expect(error.message).toContain('INVALID_ARGUMENT');
    expect(error.message).toContain('gemini-primary');
    expectNoLeak(error.message, double);
  });

  it.each([
    [400, 'error-400-api-key-invalid.json'],
    [403, 'error-403.json'],
  ])('maps a %i refusing our key to a credentials error', async (status, name) => {
    const double = await upstream(json(status, capture(name)));
    const error = await upstreamFailure(collect(provider(double).stream(REQUEST, call())));
    expect(error.kind).toBe('credentials');
    expect(error.status).toBe(status);
    expect(error.clientMessage).toBeUndefined();
    expect(error.failoverable).toBe(true);
    expectNoLeak(error.message, double);
  });

  it.each([
    [429, 'error-429.json', 'RESOURCE_EXHAUSTED'],
    [503, 'error-503.json', 'UNAVAILABLE'],
  ])('maps a %i to a failoverable status error', async (status, name, grpcStatus) => {
    const double = await upstream(json(status, capture(name)));
    const error = await upstreamFailure(collect(provider(double).stream(REQUEST, call())));
    expect(error.kind).toBe('status');
    expect(error.status).toBe(status);
    expect(error.failoverable).toBe(true);
    expect(error.clientMessage).toBeUndefined();
    expect(error.message).toContain(grpcStatus);
  });

  it('fails over on a 200 whose JSON body is an error object', async () => {
    const double = await upstream(json(200, capture('error-503.json')));
    const error = await upstreamFailure(collect(provider(double).stream(REQUEST, call())));
    expect(error.kind).toBe('protocol');
    expect(error.failoverable).toBe(true);
    expect(error.message).toContain('overloaded');
  });

  it('refuses to start when the key variable is configured but unset', () => {
    const config: GeminiProviderConfig = {
      name: 'gemini-primary',
      type: 'gemini',
      base_url: 'http://127.0.0.1:9/v1beta',
      api_key_env: 'TOLLGATE_TEST_MISSING_KEY',
      timeouts: { connect_ms: 1_000, first_byte_ms: 1_000, idle_ms: 1_000 },
    };
    expect(() => createGeminiProvider(config, {})).toThrow(/TOLLGATE_TEST_MISSING_KEY/);
  });
});

describe('createGeminiProvider: failures after the 200', () => {
  const head = captureEvents(capture('text-stream.sse')).slice(0, 2).join('');

  async function eventsAfter(then: (response: ServerResponse) => void): Promise<CanonicalEvent[]> {
    const double = await upstream(sseThen(head, then));
    return collect(provider(double).stream(REQUEST, call()));
  }

  const started: CanonicalEvent[] = [
    { type: 'response-start', upstreamModel: UPSTREAM_MODEL },
    { type: 'text-delta', delta: 'Rainy harbor' },
    { type: 'text-delta', delta: ' in Bergen, 6°C ☔' },
  ];

  it('ends with the error of an in-band error object (mid-stream capture)', async () => {
    const double = await upstream(sse(capture('mid-stream-error.sse')));
    const events = await collect(provider(double).stream(REQUEST, call()));
    expect(events).toEqual([...started, { type: 'error', code: 'upstream_error', message: expect.stringContaining('INTERNAL: An internal error has occurred') }]);
    expect(events.some((event) => event.type === 'usage')).toBe(false);
  });

  it('keeps the address and key out of an in-band error', async () => {
    const double = await upstream(json(200, ''));
    const chunk = { error: { code: 500, message: `Backend ${geminiBaseUrl(double)} failed for key ${SECRET}`, status: 'INTERNAL' } };
    double.answer(sseThen(head, (response) => response.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`)));
    const last = (await collect(provider(double).stream(REQUEST, call()))).at(-1);
    expect(last).toMatchObject({ type: 'error', code: 'upstream_error' });
    expectNoLeak(last?.type === 'error' ? last.message : '', double);
  });

  it('ends with an error event on a chunk that is not JSON', async () => {
    const events = await eventsAfter((response) => response.end('data: {"candidates":[{"content":\r\n\r\n'));
    expect(events).toEqual([...started, { type: 'error', code: 'upstream_error', message: expect.stringContaining('not JSON') }]);
  });

  it('ends with an error event on JSON that is not a GenerateContentResponse', async () => {
    const events = await eventsAfter((response) => response.end('data: [1,2,3]\r\n\r\n'));
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'upstream_error', message: expect.stringContaining('GenerateContentResponse') });
  });
});
