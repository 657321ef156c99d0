/**
 * `POST /v1/messages` and `/v1/messages/count_tokens` (Anthropic's Messages API) through a real
 * listening server, translated onto the simulated provider: the message object and the named event
 * sequence, tool use, thinking, the key as `x-api-key` or a bearer token, and every error of the
 * spec's table in the body Anthropic clients parse (status and message the spec's, `error.type` by
 * status), mid-stream failures as an `error` event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSse } from '../../src/lib/sse-decoder.js';
import { startHarness, type Harness } from '../support/harness.js';
import { testCatalog } from '../support/catalog.js';

const hello = (extra: Record<string, unknown> = {}) => ({ model: 'model-5.6', max_tokens: 256, messages: [{ role: 'user', content: 'Hello there' }], ...extra });

async function events(response: Response): Promise<Array<{ event: string | undefined; data: Record<string, unknown> }>> {
  const text = await response.text();
  const out: Array<{ event: string | undefined; data: Record<string, unknown> }> = [];
  for await (const sse of decodeSse((async function* () {
    yield Buffer.from(text);
  })())) out.push({ event: sse.event, data: JSON.parse(sse.data) as Record<string, unknown> });
  return out;
}

async function expectAnthropicError(response: Response, status: number, type: string, message: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  expect(await response.text()).toBe(JSON.stringify({ type: 'error', error: { type, message } }));
}

describe('POST /v1/messages', () => {
  let harness: Harness;
  let secret: string;
  const messages = (body: unknown, headers: Record<string, string> = { 'x-api-key': secret }) => harness.post('/v1/messages', body as object, null, { 'anthropic-version': '2023-06-01', ...headers });

  beforeAll(async () => {
    harness = await startHarness();
    ({ secret } = await harness.newAccount('10'));
  });
  afterAll(async () => harness?.close());

  it('answers a message object, billed like every surface', async () => {
    const { secret: own, accountId } = await harness.newAccount('10');
    const response = await messages(hello(), { 'x-api-key': own });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown> & { content: Array<{ type: string; text?: string }>; usage: { input_tokens: number; output_tokens: number } };
    expect(body).toMatchObject({ type: 'message', role: 'assistant', model: 'model-5.6', stop_reason: 'end_turn', stop_sequence: null });
    expect(body.id).toMatch(/^msg_/);
    expect(body.content).toHaveLength(1);
    expect(body.content[0]!.type).toBe('text');
    expect(body.content[0]!.text!.length).toBeGreaterThan(0);
    expect(body.usage.input_tokens).toBeGreaterThan(0);
    expect(body.usage.output_tokens).toBeGreaterThan(0);
    const charges = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({ model: 'model-5.6', inputTokens: body.usage.input_tokens, outputTokens: body.usage.output_tokens });
    // 1 USD in and 4 USD out per 1M tokens (test catalog): 1,000 and 4,000 nanos per token.
    expect(charges[0]!.amountNanos).toBe(BigInt(body.usage.input_tokens) * 1_000n + BigInt(body.usage.output_tokens) * 4_000n);
  });

  it("streams Anthropic's event sequence, the key sent as a bearer token", async () => {
    const response = await messages(hello({ stream: true }), { authorization: `Bearer ${secret}` });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const received = await events(response);
    const names = received.map((event) => event.event);
    expect(names.slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(new Set(names.slice(3, -3))).toEqual(new Set(['content_block_delta']));
    // Each event's payload names its own type, as Anthropic's do.
    for (const event of received) expect(event.data.type).toBe(event.event);
    const delta = received.at(-2)!.data as { delta: { stop_reason: string }; usage: { input_tokens: number; output_tokens: number } };
    expect(delta.delta.stop_reason).toBe('end_turn');
    expect(delta.usage.output_tokens).toBeGreaterThan(0);
    // message_start carries the input already (clients price each message from it): the count
    // billed at the end, with no output yet.
    const start = received[0]!.data as { message: { usage: { input_tokens: number; output_tokens: number } } };
    expect(start.message.usage.input_tokens).toBeGreaterThan(0);
    expect(start.message.usage).toMatchObject({ input_tokens: delta.usage.input_tokens, output_tokens: 0 });
  });

  it('calls a tool and takes the result back', async () => {
    const tools = [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
    const first = (await (await messages(hello({ tools, tool_choice: { type: 'any' } }))).json()) as { stop_reason: string; content: Array<Record<string, unknown>> };
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((block) => block.type === 'tool_use')!;
    expect(call).toMatchObject({ name: 'get_weather', input: { city: expect.any(String) } });
    expect(call.id).toEqual(expect.any(String));
    const second = await messages(
      hello({
        tools,
        messages: [
          { role: 'user', content: 'Weather in Oslo?' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: [{ type: 'text', text: 'Snow, -3 C' }] }] },
        ],
      }),
    );
    expect(second.status).toBe(200);
    expect(((await second.json()) as { stop_reason: string }).stop_reason).toBe('end_turn');
  });

  it('streams thinking blocks for thinking requests, without their text when display is omitted', async () => {
    const shown = await events(await messages(hello({ stream: true, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } })));
    const starts = shown.filter((event) => event.event === 'content_block_start').map((event) => (event.data.content_block as { type: string }).type);
    expect(starts[0]).toBe('thinking');
    expect(shown.some((event) => (event.data.delta as { type?: string } | undefined)?.type === 'thinking_delta')).toBe(true);
    const usage = shown.find((event) => event.event === 'message_delta')!.data.usage as { output_tokens_details: { thinking_tokens: number } };
    expect(usage.output_tokens_details.thinking_tokens).toBeGreaterThan(0);

    const omitted = await events(await messages(hello({ stream: true, max_tokens: 4096, thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'low' } })));
    expect(omitted.some((event) => (event.data.content_block as { type?: string } | undefined)?.type === 'thinking')).toBe(true);
    expect(omitted.some((event) => (event.data.delta as { type?: string } | undefined)?.type === 'thinking_delta')).toBe(false);
  });

  it('answers without thinking on a model that has no reasoning efforts, rather than refusing', async () => {
    const response = await messages(hello({ model: 'model-5.6-mini', thinking: { type: 'adaptive' }, output_config: { effort: 'high' } }));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { content: Array<{ type: string }>; usage: { output_tokens_details: { thinking_tokens: number } } };
    expect(body.content.map((block) => block.type)).toEqual(['text']);
    expect(body.usage.output_tokens_details.thinking_tokens).toBe(0);
  });

  it('counts tokens without billing', async () => {
    const { secret: own, accountId } = await harness.newAccount('10');
    const response = await harness.post('/v1/messages/count_tokens', { model: 'model-5.6', messages: [{ role: 'user', content: 'Hello there' }] }, null, { 'x-api-key': own });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { input_tokens: number };
    expect(body.input_tokens).toBeGreaterThan(3);
    expect((await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge')).toEqual([]);
    const bad = await harness.post('/v1/messages/count_tokens', { model: 'model-5.6', messages: 'Hello' }, null, { 'x-api-key': own });
    await expectAnthropicError(bad, 400, 'invalid_request_error', "Invalid type for 'messages': expected an array, but got a string instead.");
  });

  it("lists the key's models in Anthropic's shape for Anthropic's clients (Claude Code's model discovery)", async () => {
    const { secret: own } = await harness.newAccount('10', { models: ['model-5.6', 'model-5.6-mini'] });
    const response = await fetch(`${harness.baseUrl}/v1/models?limit=1000`, { headers: { 'x-api-key': own, 'anthropic-version': '2023-06-01' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      data: [
        { type: 'model', id: 'model-5.6', display_name: 'model-5.6', created_at: '2026-01-01T00:00:00.000Z' },
        { type: 'model', id: 'model-5.6-mini', display_name: 'model-5.6-mini', created_at: '2026-01-01T00:00:00.000Z' },
      ],
      has_more: false,
      first_id: 'model-5.6',
      last_id: 'model-5.6-mini',
    });
    const refused = await fetch(`${harness.baseUrl}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } });
    await expectAnthropicError(refused, 401, 'authentication_error', 'Invalid token.');
    // OpenAI's clients keep OpenAI's list.
    expect(((await (await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${own}` } })).json()) as { object: string }).object).toBe('list');
  });

  it("answers Claude Code's connectivity probe without a key", async () => {
    const response = await fetch(`${harness.baseUrl}/api/hello`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  });

  describe("errors, in Anthropic's shape with the spec's statuses and messages", () => {
    it('401: no key, an unknown key, on both endpoints', async () => {
      await expectAnthropicError(await messages(hello(), {}), 401, 'authentication_error', 'Invalid token.');
      await expectAnthropicError(await messages(hello(), { 'x-api-key': 'sk-tg-nope' }), 401, 'authentication_error', 'Invalid token.');
      await expectAnthropicError(await harness.post('/v1/messages/count_tokens', hello(), null), 401, 'authentication_error', 'Invalid token.');
    });

    it('403: a balance that cannot cover the request', async () => {
      const { secret: poor } = await harness.newAccount('0');
      await expectAnthropicError(await messages(hello(), { 'x-api-key': poor }), 403, 'permission_error', 'Insufficient balance.');
    });

    it('404: unknown routes and methods under /v1/messages', async () => {
      await expectAnthropicError(await harness.post('/v1/messages/batches', {}, secret), 404, 'not_found_error', 'Invalid URL (POST /v1/messages/batches)');
      await expectAnthropicError(await fetch(`${harness.baseUrl}/v1/messages`), 404, 'not_found_error', 'Invalid URL (GET /v1/messages)');
    });

    it('400: malformed JSON, and a body of the wrong shape naming the field', async () => {
      await expectAnthropicError(await messages('{"model": '), 400, 'invalid_request_error', 'Invalid request: invalid JSON request body.');
      await expectAnthropicError(await messages({ model: 'model-5.6', messages: [] }), 400, 'invalid_request_error', "Missing required parameter: 'max_tokens'.");
      const badRole = await messages(hello({ messages: [{ role: 'tool', content: 'x' }] }));
      expect(badRole.status).toBe(400);
      expect(((await badRole.json()) as { error: { message: string } }).error.message).toMatch(/^messages\[0\]\.role: Invalid value: 'tool'/);
    });

    it('503: an unknown model', async () => {
      await expectAnthropicError(await messages(hello({ model: 'no-such-model' })), 503, 'overloaded_error', 'The requested model is currently unavailable.');
      await expectAnthropicError(await harness.post('/v1/messages/count_tokens', { model: 'no-such-model', messages: [] }, secret), 503, 'overloaded_error', 'The requested model is currently unavailable.');
    });

    it('a failure mid-stream: an error event, and no message_stop', async () => {
      const received = await events(await messages(hello({ model: 'mid-fail-model', stream: true })));
      expect(received[0]!.event).toBe('message_start');
      expect(received.at(-1)).toEqual({ event: 'error', data: { type: 'error', error: { type: 'api_error', message: expect.any(String) } } });
      expect(received.some((event) => event.event === 'message_stop')).toBe(false);
    });

    it('the OpenAI endpoints keep their own shape', async () => {
      const response = await harness.post('/v1/chat/completions', { model: 'model-5.6' }, null);
      expect(await response.text()).toBe('{"error":{"message":"Invalid token.","type":"service_api_error","code":""}}');
    });
  });
});

describe('POST /v1/messages: 429', () => {
  let harness: Harness;
  afterAll(async () => harness?.close());

  it("answers the spec's 429 with retry-after, in Anthropic's shape", async () => {
    harness = await startHarness({ catalog: testCatalog({ requestsPerWindow: 1 }) });
    const { secret } = await harness.newAccount('10');
    const send = () => harness.post('/v1/messages', hello(), null, { 'x-api-key': secret });
    expect((await send()).status).toBe(200);
    const limited = await send();
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    await expectAnthropicError(limited, 429, 'rate_limit_error', 'Rate limit exceeded.');
  });
});
