import { describe, expect, it } from 'vitest';
import type { OpenAIProviderConfig } from '../../config/schema.js';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import { UpstreamError, type PassthroughCall, type PassthroughFrame, type PassthroughResult, type Provider } from '../provider.js';
import { createOpenAIProvider } from './openai-provider.js';
import { prepareChatBody, prepareResponsesBody } from './passthrough.js';
import { providerTestKit } from '../../../test/support/provider-test-kit.js';
import { firstEvents, json, sse, sseThen, type Answer, type UpstreamDouble } from '../../../test/support/upstream-double.js';
import { fixture } from './__fixtures__/fixtures.js';
import { collectFrames } from '../../../test/support/passthrough-frames.js';

const SECRET = 'sk-proj-PassthroughSecret77aa';
const KEY_ENV = 'TOLLGATE_TEST_OPENAI_KEY';
const UPSTREAM_MODEL = 'gpt-4.1-mini-2025-04-14';

const kit = providerTestKit();

// Long enough that a connection left open would outlive the test (which then times out and fails).
const LONG_IDLE = 60_000;

async function setup(answer: Answer, api: OpenAIProviderConfig['api'] = 'both', idleMs = 2_000): Promise<{ double: UpstreamDouble; provider: Provider }> {
  const double = await kit.upstream(answer);
  const provider = createOpenAIProvider(
    { name: 'openai-primary', type: 'openai', base_url: double.baseUrl, api_key_env: KEY_ENV, api, timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: idleMs } },
    { [KEY_ENV]: SECRET },
  );
  return { double, provider: kit.track(provider) };
}

function chatCall(overrides: Partial<PassthroughCall> = {}): PassthroughCall {
  return {
    surface: 'chat-completions',
    upstreamModel: UPSTREAM_MODEL,
    maxOutputTokens: 1_000,
    signal: new AbortController().signal,
    requestId: 'req_tollgate_0002',
    stream: true,
    clientWantsUsage: true,
    body: {
      model: 'tollgate-mini',
      messages: [{ role: 'user', content: 'Weather in Oslo and Rome?' }],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 5_000,
      logit_bias: { '50256': -100 },
      x_vendor_extension: { keep: ['me', 1, null] },
    },
    ...overrides,
  };
}

function responsesCall(overrides: Partial<PassthroughCall> = {}): PassthroughCall {
  return {
    surface: 'responses',
    upstreamModel: 'gpt-5-mini',
    maxOutputTokens: 500,
    signal: new AbortController().signal,
    requestId: 'req_tollgate_0003',
    stream: true,
    clientWantsUsage: false,
    body: { model: 'tollgate-mini', input: 'Weather in Bergen?', stream: true, max_output_tokens: 9_000, reasoning: { effort: 'low' }, include: ['reasoning.encrypted_content'], prompt_cache_key: 'abc' },
    ...overrides,
  };
}

async function framesOf(result: PassthroughResult): Promise<PassthroughFrame[]> {
  if (result.kind !== 'stream') throw new Error(`expected a stream, got ${result.kind}`);
  return collectFrames(result.frames);
}

const joined = (frames: PassthroughFrame[]): string => frames.map((frame) => frame.sse).join('');
/** The upstream's text as the client gets it: byte for byte, but naming the catalog model the client asked for. */
const asClientSees = (capture: string, upstreamModel: string, clientModel = 'tollgate-mini'): string =>
  capture.replaceAll(`"model":"${upstreamModel}"`, `"model":"${clientModel}"`);
const eventsOf = (frames: PassthroughFrame[]): CanonicalEvent[] => frames.flatMap((frame) => frame.events);

describe('passthrough: Chat Completions', () => {
  it('forwards the stream byte for byte, including the usage chunk the client asked for', async () => {
    const capture = fixture('chat-text-stream.sse');
    const { double, provider } = await setup(sse(capture, 5));
    const frames = await framesOf(await provider.passthrough!(chatCall()));

    expect(joined(frames)).toBe(asClientSees(capture, UPSTREAM_MODEL));
    expect(joined(frames)).not.toContain(UPSTREAM_MODEL);
    expect(frames.at(-1)?.sse).toBe('data: [DONE]\n\n');
    const events = eventsOf(frames);
    expect(events.filter((event) => event.type === 'text-delta').map((event) => (event.type === 'text-delta' ? event.delta : ''))).toEqual(['Oslo is', ' snowy ❄️', ' and Rome', ' is sunny.']);
    expect(events).toContainEqual({ type: 'usage', usage: { inputTokens: 812, cachedInputTokens: 768, outputTokens: 11, reasoningTokens: 3 } });
    expect(events).toContainEqual({ type: 'finish', reason: 'stop' });

    const [received] = double.requests;
    expect(received?.path).toBe('/v1/chat/completions');
    expect(received?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(received?.headers['x-request-id']).toBe('req_tollgate_0002');
    expect(received?.body).toEqual({
      model: UPSTREAM_MODEL,
      messages: [{ role: 'user', content: 'Weather in Oslo and Rome?' }],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 1_000,
      logit_bias: { '50256': -100 },
      x_vendor_extension: { keep: ['me', 1, null] },
    });
  });

  it('forces usage upstream and drops the usage frame when the client did not ask for it', async () => {
    const capture = fixture('chat-text-stream.sse');
    const { double, provider } = await setup(sse(capture));
    const body = { model: 'tollgate-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_obfuscation: false } };
    const frames = await framesOf(await provider.passthrough!(chatCall({ body, clientWantsUsage: false })));

    expect(double.requests[0]?.body.stream_options).toEqual({ include_obfuscation: false, include_usage: true });
    const usageFrame = frames.find((frame) => frame.events.some((event) => event.type === 'usage'));
    expect(usageFrame?.sse).toBe('');
    expect(usageFrame?.events).toEqual([{ type: 'usage', usage: { inputTokens: 812, cachedInputTokens: 768, outputTokens: 11, reasoningTokens: 3 } }]);
    expect(joined(frames)).not.toContain('"choices":[]');
    expect(joined(frames)).toContain('"model":"tollgate-mini"');
    expect(joined(frames).endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('passes two parallel tool calls through and meters their arguments', async () => {
    const capture = fixture('chat-tool-calls-stream.sse');
    const { provider } = await setup(sse(capture, 33));
    const frames = await framesOf(await provider.passthrough!(chatCall()));
    expect(joined(frames)).toBe(asClientSees(capture, UPSTREAM_MODEL));
    const argumentsByIndex = new Map<number, string>();
    for (const event of eventsOf(frames)) {
      if (event.type === 'tool-call-delta') argumentsByIndex.set(event.index, (argumentsByIndex.get(event.index) ?? '') + event.delta);
    }
    expect(Object.fromEntries(argumentsByIndex)).toEqual({ 0: '{"city":"Oslo"}', 1: '{"city":"Rome"}' });
    expect(eventsOf(frames)).toContainEqual({ type: 'finish', reason: 'tool_calls' });
  });

  it('returns a non-streamed answer as the upstream wrote it but for the model, with its usage for the meter', async () => {
    const answer = fixture('chat-completion.json');
    const { double, provider } = await setup(json(200, answer));
    const body = { model: 'tollgate-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4_000, seed: 7 };
    const result = await provider.passthrough!(chatCall({ body, stream: false }));

    expect(result.kind).toBe('json');
    if (result.kind !== 'json') return;
    expect(result.body).toEqual({ ...JSON.parse(answer), model: 'tollgate-mini' });
    // Byte for byte (the capture is pretty-printed), but for the model's value.
    expect(result.text).toBe(answer.replace(`"model": "${UPSTREAM_MODEL}"`, '"model": "tollgate-mini"'));
    expect(JSON.parse(result.text!)).toEqual(result.body);
    // A sane usage report is all the meter reads: the output is not turned into events.
    expect(result.events).toEqual([{ type: 'usage', usage: { inputTokens: 812, cachedInputTokens: 768, outputTokens: 64, reasoningTokens: 0 } }]);
    // The client's own max_tokens is kept (capped), and no second cap field is added.
    expect(double.requests[0]?.body).toEqual({ model: UPSTREAM_MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1_000, seed: 7 });
    expect(double.requests[0]?.headers.accept).toBe('application/json');
  });

  it('ends with a failure for the gateway to render, without [DONE], on garbage mid-stream', async () => {
    const head = firstEvents(fixture('chat-text-stream.sse'), 2);
    const { provider } = await setup(sseThen(head, (response) => response.end('data: {"choices":\n\n')));
    const frames = await framesOf(await provider.passthrough!(chatCall()));

    expect(frames.slice(0, 2).map((frame) => frame.sse).join('')).toBe(asClientSees(head, UPSTREAM_MODEL));
    const last = frames.at(-1);
    expect(last?.sse).toBe('');
    expect(last?.failure).toEqual({ message: expect.stringContaining('not JSON') });
    expect(last?.events).toEqual([{ type: 'error', code: 'upstream_error', message: last?.failure?.message }]);
    expect(frames.some((frame) => frame.last === true)).toBe(false);
    expect(joined(frames)).not.toContain('[DONE]');
  });

  it('ends with a failure when the socket is destroyed mid-stream', async () => {
    const { provider } = await setup(sseThen(firstEvents(fixture('chat-text-stream.sse'), 2), (response) => response.destroy()));
    const frames = await framesOf(await provider.passthrough!(chatCall()));
    expect(frames).toHaveLength(3);
    expect(frames[2]?.events[0]).toMatchObject({ type: 'error', code: 'upstream_error' });
    expect(frames[2]?.failure?.message).toEqual(expect.any(String));
  });

  it('replaces an upstream error chunk with a failure that names neither the address nor the key', async () => {
    const { double, provider } = await setup(json(200, ''));
    const chunk = JSON.stringify({ error: { message: `overloaded at ${double.baseUrl} for ${SECRET}`, type: 'server_error', param: null, code: 'x' } });
    double.answer(sseThen(firstEvents(fixture('chat-text-stream.sse'), 2), (response) => response.end(`data: ${chunk}\n\n`)));
    const frames = await framesOf(await provider.passthrough!(chatCall()));
    const last = frames.at(-1)!;
    expect(last.sse).toBe('');
    expect(last.failure?.message).toContain('overloaded at [upstream]');
    expect(last.failure?.message).not.toContain(SECRET);
    expect(last.failure?.message).not.toContain(double.baseUrl);
  });

  it('marks [DONE] as the frame that ends the answer, and only it', async () => {
    const { provider } = await setup(sse(fixture('chat-text-stream.sse')));
    const frames = await framesOf(await provider.passthrough!(chatCall()));
    expect(frames.filter((frame) => frame.last === true)).toEqual([frames.at(-1)]);
    expect(frames.at(-1)?.sse).toBe('data: [DONE]\n\n');
  });

  it('closes the upstream connection when the consumer breaks out', async () => {
    const { double, provider } = await setup(
      sseThen(firstEvents(fixture('chat-text-stream.sse'), 3), () => {
        // keeps generating
      }),
      'both',
      LONG_IDLE,
    );
    const result = await provider.passthrough!(chatCall());
    if (result.kind !== 'stream') throw new Error('expected a stream');
    const frames = result.frames;
    frames.start({
      frame: (frame) => {
        if (frame.events.some((event) => event.type === 'text-delta')) frames.release();
      },
      closed: () => undefined,
    });
    await double.requests[0]?.connectionClosed;
    expect(double.requests[0]?.answerFinishedAtClose()).toBe(false);
  });

  it('closes the upstream connection when the frames are abandoned before the first one', async () => {
    const { double, provider } = await setup(sseThen(firstEvents(fixture('chat-text-stream.sse'), 3), () => undefined), 'both', LONG_IDLE);
    const result = await provider.passthrough!(chatCall());
    if (result.kind !== 'stream') throw new Error('expected a stream');
    result.frames.release();
    await double.requests[0]?.connectionClosed;
  });

  it('throws UpstreamError with the client message on a 400', async () => {
    const { double, provider } = await setup(json(400, ''));
    double.answer(json(400, fixture('error-400.json', { baseUrl: double.baseUrl, apiKey: SECRET })));
    const error = await provider.passthrough!(chatCall()).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'status', status: 400 });
    const clientMessage = (error as UpstreamError).clientMessage ?? '';
    expect(clientMessage).toContain('Unsupported value');
    expect(clientMessage).not.toContain(SECRET);
    expect(clientMessage).not.toContain(double.baseUrl);
  });

  it('refuses a surface the upstream does not speak', async () => {
    const { double, provider } = await setup(sse(''), 'chat');
    await expect(provider.passthrough!(responsesCall())).rejects.toBeInstanceOf(UpstreamError);
    expect(double.requests).toHaveLength(0);
  });
});

describe('passthrough: Responses', () => {
  it('forwards the event stream byte for byte and meters text, usage and finish', async () => {
    const capture = fixture('responses-text-stream.sse');
    const { double, provider } = await setup(sse(capture, 11));
    const frames = await framesOf(await provider.passthrough!(responsesCall()));

    expect(joined(frames)).toBe(asClientSees(capture, 'gpt-5-mini-2025-08-07'));
    expect(joined(frames)).not.toContain('gpt-5-mini-2025-08-07');
    const events = eventsOf(frames);
    expect(events.filter((event) => event.type === 'text-delta')).toHaveLength(3);
    expect(events).toContainEqual({ type: 'usage', usage: { inputTokens: 1290, cachedInputTokens: 1024, outputTokens: 145, reasoningTokens: 128 } });
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    // Only the terminal frame carries the final response object, parsed once, for storing.
    const finals = frames.filter((frame) => frame.finalResponse !== undefined);
    expect(finals).toHaveLength(1);
    expect(finals[0]).toBe(frames.at(-1));
    expect(finals[0]!.finalResponse).toMatchObject({ object: 'response', status: 'completed' });

    const [received] = double.requests;
    expect(received?.path).toBe('/v1/responses');
    expect(received?.body).toEqual({
      model: 'gpt-5-mini',
      input: 'Weather in Bergen?',
      stream: true,
      max_output_tokens: 500,
      reasoning: { effort: 'low' },
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'abc',
    });
  });

  it('returns a non-streamed response object as is, but for the model', async () => {
    const answer = fixture('responses-object.json');
    const { provider } = await setup(json(200, answer));
    const result = await provider.passthrough!(responsesCall({ stream: false, body: { model: 'tollgate-mini', input: 'hi' } }));
    expect(result).toMatchObject({ kind: 'json', body: { ...JSON.parse(answer), model: 'tollgate-mini' } });
    if (result.kind !== 'json') return;
    expect(result.text).toBe(answer.replace('"model": "gpt-5-mini-2025-08-07"', '"model": "tollgate-mini"'));
    expect(result.events).toEqual([{ type: 'usage', usage: { inputTokens: 1290, cachedInputTokens: 1024, outputTokens: 145, reasoningTokens: 128 } }]);
  });

  it('gives the meter the output of a whole answer whose usage is missing or not sane, to count it itself', async () => {
    const parsed = JSON.parse(fixture('responses-object.json')) as Record<string, unknown>;
    const { double, provider } = await setup(json(200, JSON.stringify({ ...parsed, usage: null })));
    const call = responsesCall({ stream: false, body: { model: 'tollgate-mini', input: 'hi' } });
    const missing = await provider.passthrough!(call);
    expect(missing.kind === 'json' && missing.events).toEqual([
      { type: 'text-delta', delta: 'A rainy harbor in Bergen, 6°C.' },
      { type: 'finish', reason: 'stop' },
    ]);

    double.answer(json(200, JSON.stringify({ ...parsed, usage: { input_tokens: 12, output_tokens: -3 } })));
    const absurd = await provider.passthrough!(call);
    expect(absurd.kind === 'json' && absurd.events.map((event) => event.type)).toEqual(['text-delta', 'usage', 'finish']);

    const chat = JSON.parse(fixture('chat-completion.json')) as Record<string, unknown>;
    double.answer(json(200, JSON.stringify({ ...chat, usage: { prompt_tokens: 12, completion_tokens: 2 ** 40 } })));
    const chatAbsurd = await provider.passthrough!(chatCall({ stream: false, body: { model: 'tollgate-mini', messages: [] } }));
    expect(chatAbsurd.kind === 'json' && chatAbsurd.events.map((event) => event.type)).toEqual(['text-delta', 'usage', 'finish']);
  });

  it('reports a failed response object to the meter, with its message cleaned', async () => {
    const parsed = JSON.parse(fixture('responses-object.json')) as Record<string, unknown>;
    const { double, provider } = await setup(json(200, ''));
    double.answer(json(200, JSON.stringify({ ...parsed, status: 'failed', error: { code: 'server_error', message: `failed at ${double.baseUrl}` } })));
    const result = await provider.passthrough!(responsesCall({ stream: false, body: { model: 'tollgate-mini', input: 'hi' } }));
    expect(result.kind === 'json' && result.events).toEqual([
      { type: 'usage', usage: { inputTokens: 1290, cachedInputTokens: 1024, outputTokens: 145, reasoningTokens: 128 } },
      { type: 'error', code: 'upstream_error', message: 'failed at [upstream]', upstreamCode: 'server_error' },
    ]);
  });

  it('writes a whole answer anew when its model is not written once as a plain pair', async () => {
    const { double, provider } = await setup(json(200, '{"id":"chatcmpl-1","model":"gpt\u002d4.1","choices":[],"usage":null}'));
    const call = chatCall({ stream: false, body: { model: 'tollgate-mini', messages: [] } });
    const escaped = await provider.passthrough!(call);
    expect(escaped.kind === 'json' && escaped.text).toBe('{"id":"chatcmpl-1","model":"tollgate-mini","choices":[],"usage":null}');

    // The same name nested deeper: only the answer's own model is the client's to see renamed.
    double.answer(json(200, '{"id":"resp_1","object":"response","model":"gpt-5","tools":[{"type":"x","model":"gpt-5"}]}'));
    const nested = await provider.passthrough!(responsesCall({ stream: false, body: { model: 'tollgate-mini', input: 'hi' } }));
    expect(nested.kind === 'json' && JSON.parse(nested.text!)).toEqual({ id: 'resp_1', object: 'response', model: 'tollgate-mini', tools: [{ type: 'x', model: 'gpt-5' }] });

    // Already the client's name: nothing to change.
    double.answer(json(200, '{"model" : "tollgate-mini", "choices": []}'));
    const same = await provider.passthrough!(call);
    expect(same.kind === 'json' && same.text).toBe('{"model" : "tollgate-mini", "choices": []}');
  });

  it('ends with a failure numbered after the last event, carrying the response as announced, when the socket is destroyed', async () => {
    const { provider } = await setup(sseThen(firstEvents(fixture('responses-text-stream.sse'), 7), (response) => response.destroy()));
    const frames = await framesOf(await provider.passthrough!(responsesCall()));
    expect(frames).toHaveLength(8);
    const last = frames.at(-1)!;
    expect(last.sse).toBe('');
    expect(last.failure).toEqual({ message: expect.any(String), sequenceNumber: 7, response: expect.objectContaining({ id: 'resp_68b1f0c2a9d48190', status: 'in_progress', model: 'tollgate-mini' }) });
    expect(last.events).toEqual([{ type: 'error', code: 'upstream_error', message: last.failure?.message }]);
  });

  it('replaces an upstream error event with a clean failure taking its number', async () => {
    const { double, provider } = await setup(json(200, ''));
    const upstreamError = JSON.stringify({ type: 'error', sequence_number: 3, code: 'server_error', message: `boom at ${double.baseUrl}`, param: null });
    double.answer(sseThen(firstEvents(fixture('responses-text-stream.sse'), 3), (response) => response.end(`event: error\ndata: ${upstreamError}\n\n`)));
    const frames = await framesOf(await provider.passthrough!(responsesCall()));
    expect(frames.at(-1)?.failure).toMatchObject({ message: 'boom at [upstream]', sequenceNumber: 3 });
  });

  it('ends with a failure on garbage mid-stream', async () => {
    const { provider } = await setup(sseThen(firstEvents(fixture('responses-text-stream.sse'), 2), (response) => response.end('event: response.output_text.delta\ndata: not json\n\n')));
    const frames = await framesOf(await provider.passthrough!(responsesCall()));
    expect(frames).toHaveLength(3);
    expect(frames[2]?.failure).toMatchObject({ sequenceNumber: 2, message: expect.stringContaining('not JSON') });
    expect(frames[2]?.events[0]?.type).toBe('error');
  });

  it('marks the terminal event as the frame that ends the answer, and only it', async () => {
    const { provider } = await setup(sse(fixture('responses-text-stream.sse')));
    const frames = await framesOf(await provider.passthrough!(responsesCall()));
    expect(frames.filter((frame) => frame.last === true)).toEqual([frames.at(-1)]);
    expect(frames.at(-1)?.sse.startsWith('event: response.completed\n')).toBe(true);
  });
});

describe('passthrough body rewriting', () => {
  const base = { upstreamModel: 'up', maxOutputTokens: 100, stream: false };

  it('caps the client cap, or sets the gateway cap when the client gave none', () => {
    expect(prepareChatBody({ ...base, body: { model: 'a', max_completion_tokens: 50 } }).max_completion_tokens).toBe(50);
    expect(prepareChatBody({ ...base, body: { model: 'a', max_completion_tokens: 500 } }).max_completion_tokens).toBe(100);
    expect(prepareChatBody({ ...base, body: { model: 'a' } }).max_completion_tokens).toBe(100);
    expect(prepareChatBody({ ...base, body: { model: 'a', max_tokens: 500 } })).toEqual({ model: 'up', max_tokens: 100 });
    expect(prepareResponsesBody({ ...base, body: { model: 'a', max_output_tokens: 40 } }).max_output_tokens).toBe(40);
    expect(prepareResponsesBody({ ...base, body: { model: 'a' } }).max_output_tokens).toBe(100);
  });

  it('leaves stream_options alone on a non-streamed call and does not mutate the client body', () => {
    const body = { model: 'a', stream: false, metadata: { k: 'v' } };
    const prepared = prepareChatBody({ ...base, body });
    expect(prepared).toEqual({ model: 'up', stream: false, metadata: { k: 'v' }, max_completion_tokens: 100 });
    expect(body).toEqual({ model: 'a', stream: false, metadata: { k: 'v' } });
  });
});
