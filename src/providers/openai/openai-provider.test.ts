import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { OpenAIProviderConfig } from '../../config/schema.js';
import type { CanonicalEvent, CanonicalRequest } from '../../protocol/canonical.js';
import type { Provider, ProviderCall } from '../provider.js';
import { collect, expectNoSecrets, providerTestKit, upstreamFailure } from '../../../test/support/provider-test-kit.js';
import { createOpenAIProvider } from './openai-provider.js';
import { firstEvents, json, sse, sseThen, type UpstreamDouble } from '../../../test/support/upstream-double.js';
import { fixture } from './__fixtures__/fixtures.js';

const SECRET = 'sk-proj-T0llgateUpstreamSecret8c1f';
const KEY_ENV = 'TOLLGATE_TEST_OPENAI_KEY';
const ENV = { [KEY_ENV]: SECRET };
const UPSTREAM_MODEL = 'gpt-4.1-mini-2025-04-14';

const REQUEST: CanonicalRequest = {
  model: 'tollgate-mini',
  instructions: 'Answer tersely.',
  input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and Rome?' }] }],
  tools: [{ name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
  toolChoice: 'auto',
  parallelToolCalls: true,
  maxOutputTokens: 5_000,
  temperature: 0.2,
  stream: true,
};

const kit = providerTestKit();
const upstream = kit.upstream;

function provider(double: UpstreamDouble | string, overrides: Partial<OpenAIProviderConfig> = {}): Provider {
  const config: OpenAIProviderConfig = {
    name: 'openai-primary',
    type: 'openai',
    base_url: typeof double === 'string' ? double : double.baseUrl,
    api_key_env: KEY_ENV,
    api: 'both',
    timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 },
    ...overrides,
  };
  const created = createOpenAIProvider(config, ENV);
  return kit.track(created);
}

function call(overrides: Partial<ProviderCall> = {}): ProviderCall {
  return { upstreamModel: UPSTREAM_MODEL, maxOutputTokens: 1_000, signal: new AbortController().signal, requestId: 'req_tollgate_0001', ...overrides };
}


function expectNoLeak(text: string | undefined, double: UpstreamDouble): void {
  expectNoSecrets(text, [SECRET, double.baseUrl]);
}

describe('createOpenAIProvider: canonical stream over Chat Completions', () => {
  it('streams a text answer with usage and sends the Chat body upstream', async () => {
    const double = await upstream(sse(fixture('chat-text-stream.sse'), 7));
    const events = await collect(provider(double).stream(REQUEST, call()));

    expect(events).toEqual([
      { type: 'response-start', upstreamModel: UPSTREAM_MODEL },
      { type: 'text-delta', delta: 'Oslo is' },
      { type: 'text-delta', delta: ' snowy ❄️' },
      { type: 'text-delta', delta: ' and Rome' },
      { type: 'text-delta', delta: ' is sunny.' },
      { type: 'usage', usage: { inputTokens: 812, cachedInputTokens: 768, outputTokens: 11, reasoningTokens: 3 } },
      { type: 'finish', reason: 'stop' },
    ]);

    expect(double.requests).toHaveLength(1);
    const [received] = double.requests;
    expect(received?.method).toBe('POST');
    expect(received?.path).toBe('/v1/chat/completions');
    expect(received?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.headers.accept).toBe('text/event-stream');
    expect(received?.headers['x-request-id']).toBe('req_tollgate_0001');
    expect(received?.body).toEqual({
      model: UPSTREAM_MODEL,
      messages: [
        { role: 'system', content: 'Answer tersely.' },
        { role: 'user', content: 'Weather in Oslo and Rome?' },
      ],
      tools: [{ type: 'function', function: { name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      max_completion_tokens: 1_000,
      temperature: 0.2,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('streams two parallel tool calls', async () => {
    const double = await upstream(sse(fixture('chat-tool-calls-stream.sse'), 64));
    const events = await collect(provider(double).stream(REQUEST, call()));

    expect(events).toEqual([
      { type: 'response-start', upstreamModel: UPSTREAM_MODEL },
      { type: 'tool-call-start', index: 0, callId: 'call_a1Oslo', name: 'weather' },
      { type: 'tool-call-delta', index: 0, delta: '{"city":' },
      { type: 'tool-call-start', index: 1, callId: 'call_b2Rome', name: 'weather' },
      { type: 'tool-call-delta', index: 0, delta: '"Oslo"}' },
      { type: 'tool-call-delta', index: 1, delta: '{"city":"Ro' },
      { type: 'tool-call-delta', index: 1, delta: 'me"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-end', index: 1 },
      { type: 'usage', usage: { inputTokens: 95, cachedInputTokens: 0, outputTokens: 40, reasoningTokens: 0 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('sends no Authorization header when no key is configured', async () => {
    const double = await upstream(sse(fixture('chat-text-stream.sse')));
    await collect(provider(double, { api_key_env: undefined }).stream(REQUEST, call()));
    expect(double.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('reads a whole JSON answer when the upstream ignores stream: true', async () => {
    const double = await upstream(json(200, fixture('chat-completion.json')));
    const events = await collect(provider(double).stream(REQUEST, call()));
    expect(events).toEqual([
      { type: 'response-start', upstreamModel: UPSTREAM_MODEL },
      { type: 'text-delta', delta: 'Oslo is snowy; Rome is sunny.' },
      { type: 'usage', usage: { inputTokens: 812, cachedInputTokens: 768, outputTokens: 64, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });
});

describe('createOpenAIProvider: failures before the 200', () => {
  it('maps a 400 to a status error whose client message is free of the address and key', async () => {
    const double = await upstream(json(400, ''));
    double.answer(json(400, fixture('error-400.json', { baseUrl: double.baseUrl, apiKey: SECRET })));
    const error = await upstreamFailure(collect(provider(double).stream(REQUEST, call())));

    expect(error.kind).toBe('status');
    expect(error.status).toBe(400);
    expect(error.failoverable).toBe(false);
    expect(error.clientMessage).toContain("Unsupported value: 'temperature' does not support 0.2");
    expectNoLeak(error.clientMessage, double);
    expect(error.message).toContain('400');
    expect(error.message).toContain('openai-primary');
    expectNoLeak(error.message, double);
  });

  it('maps a 401 to a credentials error that never repeats the key', async () => {
    const double = await upstream(json(401, fixture('error-401.json', { apiKey: SECRET })));
    const error = await upstreamFailure(collect(provider(double).stream(REQUEST, call())));

    expect(error.kind).toBe('credentials');
    expect(error.status).toBe(401);
    expect(error.clientMessage).toBeUndefined();
    expect(error.failoverable).toBe(true);
    expect(error.message).toContain('Incorrect API key provided: [redacted]');
    expectNoLeak(error.message, double);
  });

  it('maps a 403 to a credentials error', async () => {
    const double = await upstream(json(403, '{"error":{"message":"Project does not have access","type":"invalid_request_error","param":null,"code":null}}'));
    const error = await upstreamFailure(collect(provider(double).stream(REQUEST, call())));
    expect(error.kind).toBe('credentials');
  });

  it.each([
    [429, 'error-429.json'],
    [500, 'error-500.json'],
  ])('maps a %i to a failoverable status error', async (status, name) => {
    const double = await upstream(json(status, fixture(name)));
    const error = await upstreamFailure(collect(provider(double).stream(REQUEST, call())));
    expect(error.kind).toBe('status');
    expect(error.status).toBe(status);
    expect(error.failoverable).toBe(true);
    expect(error.message).toContain(String(status));
  });
});

describe('createOpenAIProvider: failures after the 200', () => {
  const capture = fixture('chat-text-stream.sse');
  const head = firstEvents(capture, 2);

  async function eventsAfter(then: (response: ServerResponse) => void): Promise<CanonicalEvent[]> {
    const double = await upstream(sseThen(head, then));
    return collect(provider(double).stream(REQUEST, call()));
  }

  it('ends with an error event on a chunk that is not JSON', async () => {
    const events = await eventsAfter((response) => response.end('data: {"choices":[{"delta":{"content":"x"\n\n'));
    expect(events.slice(0, 2)).toEqual([
      { type: 'response-start', upstreamModel: UPSTREAM_MODEL },
      { type: 'text-delta', delta: 'Oslo is' },
    ]);
    expect(events).toHaveLength(3);
    expect(events[2]).toMatchObject({ type: 'error', code: 'upstream_error', message: expect.stringContaining('not JSON') });
  });

  it('ends with an error event on a JSON chunk that is not a chunk', async () => {
    const events = await eventsAfter((response) => response.end('data: [1,2,3]\n\n'));
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'upstream_error' });
  });

  it('passes on an in-band error without the address or key', async () => {
    const double = await upstream(json(200, ''));
    const chunk = { error: { message: `Upstream overloaded (${double.baseUrl}, key ${SECRET})`, type: 'server_error', param: null, code: 'upstream_overloaded' } };
    double.answer(sseThen(head, (response) => response.end(`data: ${JSON.stringify(chunk)}\n\n`)));
    const events = await collect(provider(double).stream(REQUEST, call()));
    const last = events.at(-1);
    expect(last).toMatchObject({ type: 'error', code: 'upstream_error' });
    expect(last?.type === 'error' ? last.message : '').toContain('Upstream overloaded');
    expectNoLeak(last?.type === 'error' ? last.message : '', double);
  });

  it('finishes normally when the body ends after the finish chunk', async () => {
    const withoutUsage = firstEvents(capture, 6);
    const events = await eventsAfter((response) => response.end(withoutUsage.slice(head.length)));
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(events.some((event) => event.type === 'error')).toBe(false);
  });
});

describe('createOpenAIProvider: canonical stream over Responses', () => {
  it('uses /responses when the upstream speaks only Responses', async () => {
    const double = await upstream(sse(fixture('responses-text-stream.sse'), 100));
    const events = await collect(provider(double, { api: 'responses' }).stream(REQUEST, call({ upstreamModel: 'gpt-5-mini' })));

    expect(events).toEqual([
      { type: 'response-start', upstreamModel: 'gpt-5-mini' },
      { type: 'text-delta', delta: 'A rainy' },
      { type: 'text-delta', delta: ' harbor in' },
      { type: 'text-delta', delta: ' Bergen, 6°C.' },
      { type: 'usage', usage: { inputTokens: 1290, cachedInputTokens: 1024, outputTokens: 145, reasoningTokens: 128 } },
      { type: 'finish', reason: 'stop' },
    ]);
    const [received] = double.requests;
    expect(received?.path).toBe('/v1/responses');
    expect(received?.body).toMatchObject({
      model: 'gpt-5-mini',
      instructions: 'Answer tersely.',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo and Rome?' }] }],
      tools: [{ type: 'function', name: 'weather', description: 'Current weather', strict: false }],
      max_output_tokens: 1_000,
      stream: true,
      store: false,
    });
  });
});

describe('createOpenAIProvider: configuration', () => {
  it('says which surfaces it speaks natively', () => {
    const url = 'http://127.0.0.1:9/v1';
    expect(provider(url, { api: 'chat' }).speaksNatively?.('chat-completions')).toBe(true);
    expect(provider(url, { api: 'chat' }).speaksNatively?.('responses')).toBe(false);
    expect(provider(url, { api: 'responses' }).speaksNatively?.('chat-completions')).toBe(false);
    expect(provider(url, { api: 'both' }).speaksNatively?.('responses')).toBe(true);
  });

  it('refuses to start when the key variable is configured but unset', () => {
    const config: OpenAIProviderConfig = {
      name: 'openai-primary',
      type: 'openai',
      base_url: 'http://127.0.0.1:9/v1',
      api_key_env: 'TOLLGATE_TEST_MISSING_KEY',
      api: 'both',
      timeouts: { connect_ms: 1_000, first_byte_ms: 1_000, idle_ms: 1_000 },
    };
    expect(() => createOpenAIProvider(config, {})).toThrow(/TOLLGATE_TEST_MISSING_KEY/);
  });
});
