/**
 * Stored responses through the real server and the official `openai` client: `store`,
 * `previous_response_id` chains served over a Chat-only upstream (which must receive the whole
 * conversation), GET / DELETE / input_items with their cursor, account isolation, streams whose
 * response is stored before the final event, and a tool round trip across turns.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble, type UpstreamReply } from '../support/openai-upstream.js';
import { textOf, weatherTool } from '../support/weather-tool.js';

/** The double answers from the conversation it was sent, so every turn's answer is distinct. */
function replyTo(body: Record<string, unknown>): UpstreamReply {
  if (Array.isArray(body.messages)) {
    const last = body.messages.at(-1) as { role?: string; content?: unknown };
    if (last.role === 'tool') return { content: `Tool said: ${textOf(last.content)}` };
    const text = textOf(last.content);
    if (text.includes('weather')) return { toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] };
    return { content: `Reply to: ${text}` };
  }
  const input = body.input;
  const text = typeof input === 'string' ? input : Array.isArray(input) ? textOf((input.at(-1) as { content?: unknown }).content) : '';
  return { content: `Reply to: ${text}` };
}

function catalogWith(upstreamBaseUrl: string): unknown {
  const catalog = testCatalog() as { providers: unknown[]; models: unknown[] };
  const upstream = (name: string, api: string) => ({ name, type: 'openai', api, base_url: upstreamBaseUrl, api_key_env: 'TEST_UPSTREAM_KEY' });
  const model = (id: string, provider: string) => ({
    id,
    prices: { input: '1', cached_input: '0.5', output: '4' },
    max_output_tokens: 512,
    targets: [{ provider, model: 'upstream-model' }],
  });
  catalog.providers.push(upstream('chat-only', 'chat'), upstream('native', 'both'));
  catalog.models.push(model('chat-model', 'chat-only'), model('native-model', 'native'));
  return catalog;
}

/** The upstream messages as role + text (assistant tool calls as `name(arguments)`), for order checks. */
function conversationOf(body: Record<string, unknown>): string[] {
  return (body.messages as Array<Record<string, unknown>>).map((message) => {
    const calls = (message.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }> | undefined) ?? [];
    const callText = calls.map((call) => ` ${call.id}:${call.function.name}(${call.function.arguments})`).join('');
    return `${String(message.role)}: ${textOf(message.content)}${callText}`;
  });
}

describe.each(engines)('stored responses on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let client: OpenAI;
  let secret: string;
  let strangerSecret: string;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ reply: replyTo });
    harness = await startHarness({ engine, catalog: catalogWith(upstream.baseUrl), env: { TEST_UPSTREAM_KEY: 'sk-upstream' } });
    ({ secret } = await harness.newAccount('20'));
    ({ secret: strangerSecret } = await harness.newAccount('20'));
    client = harness.client(secret);
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  const request = (method: string, path: string, key = secret): Promise<Response> =>
    fetch(`${harness.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${key}` } });

  it('a three-turn previous_response_id chain through a chat-only upstream sends the upstream the whole conversation', async () => {
    const first = upstream.requests.length;
    const turn1 = await client.responses.create({ model: 'chat-model', instructions: 'Be brief.', input: 'turn 1 question' });
    const turn2 = await client.responses.create({ model: 'chat-model', instructions: 'Answer in English.', input: 'turn 2 question', previous_response_id: turn1.id });
    const turn3 = await client.responses.create({ model: 'chat-model', input: 'turn 3 question', previous_response_id: turn2.id });

    const sent = upstream.requests.slice(first);
    expect(sent.map((each) => each.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions', '/v1/chat/completions']);
    // Instructions come from the new request only: turn 1's are not carried over.
    expect(conversationOf(sent[1]!.body)).toEqual([
      'system: Answer in English.',
      'user: turn 1 question',
      'assistant: Reply to: turn 1 question',
      'user: turn 2 question',
    ]);
    expect(conversationOf(sent[2]!.body)).toEqual([
      'user: turn 1 question',
      'assistant: Reply to: turn 1 question',
      'user: turn 2 question',
      'assistant: Reply to: turn 2 question',
      'user: turn 3 question',
    ]);
    expect(turn3.output_text).toBe('Reply to: turn 3 question');
    expect(turn3.previous_response_id).toBe(turn2.id);
    expect((turn3 as unknown as { store: unknown }).store).toBe(true);
    expect(turn3.instructions).toBeNull();
    expect(turn1.previous_response_id).toBeNull();
  });

  it('gets a stored response as it was sent, lists its input items with ids, pages them, and deletes it', async () => {
    const turn1 = await client.responses.create({
      model: 'chat-model',
      input: [
        { role: 'user', content: 'a' },
        { role: 'user', content: [{ type: 'input_text', text: 'b' }] },
        { role: 'developer', content: 'c' },
      ],
    });
    const created = await harness.post('/v1/responses', { model: 'chat-model', input: 'd', previous_response_id: turn1.id }, secret);
    const turn2 = (await created.json()) as { id: string };

    const got = await request('GET', `/v1/responses/${turn2.id}`);
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual(turn2);

    const newestFirst = await client.responses.inputItems.list(turn2.id);
    const ascending = [...newestFirst.data].reverse();
    expect(newestFirst.has_more).toBe(false);
    expect(ascending.map((item) => textOf((item as { content?: unknown }).content))).toEqual(['a', 'b', 'c', 'Reply to: c', 'd']);
    expect(ascending.map((item) => (item as { role?: string }).role)).toEqual(['user', 'user', 'developer', 'assistant', 'user']);
    for (const item of ascending) expect(item.id).toMatch(/^msg_/);
    // The earlier turn's items keep their ids, and its answer keeps its output id.
    const turn1Items = await client.responses.inputItems.list(turn1.id, { order: 'asc' });
    expect(ascending.slice(0, 3).map((item) => item.id)).toEqual(turn1Items.data.map((item) => item.id));
    expect(ascending[3]?.id).toBe(turn1.output[0]?.id);
    expect(ascending[0]).toEqual({ id: ascending[0]?.id, type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'a' }] });

    const firstPage = (await (await request('GET', `/v1/responses/${turn2.id}/input_items?order=asc&limit=2`)).json()) as Record<string, unknown>;
    expect(firstPage).toEqual({ object: 'list', data: ascending.slice(0, 2), first_id: ascending[0]?.id, last_id: ascending[1]?.id, has_more: true });
    const lastPage = (await (await request('GET', `/v1/responses/${turn2.id}/input_items?order=asc&limit=2&after=${ascending[3]?.id}`)).json()) as Record<string, unknown>;
    expect(lastPage).toEqual({ object: 'list', data: [ascending[4]], first_id: ascending[4]?.id, last_id: ascending[4]?.id, has_more: false });
    const descPage = (await (await request('GET', `/v1/responses/${turn2.id}/input_items?limit=1&after=${ascending[4]?.id}`)).json()) as Record<string, unknown>;
    expect(descPage).toMatchObject({ data: [ascending[3]], has_more: true });
    // The SDK's auto-pagination follows `after` through every page.
    const paged: string[] = [];
    for await (const item of client.responses.inputItems.list(turn2.id, { order: 'asc', limit: 2 })) paged.push(item.id);
    expect(paged).toEqual(ascending.map((item) => item.id));

    const deleted = await request('DELETE', `/v1/responses/${turn2.id}`);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id: turn2.id, object: 'response', deleted: true });
    const gone = await request('GET', `/v1/responses/${turn2.id}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ error: { message: `Response with id '${turn2.id}' not found.`, type: 'invalid_request_error', code: 'not_found' } });
    expect((await request('DELETE', `/v1/responses/${turn2.id}`)).status).toBe(404);
    expect((await request('GET', `/v1/responses/${turn2.id}/input_items`)).status).toBe(404);
    await client.responses.delete(turn1.id);
    await expect(client.responses.retrieve(turn1.id)).rejects.toMatchObject({ status: 404 });
  });

  it('answers bad input_items query values with a 400 naming the parameter', async () => {
    const stored = await client.responses.create({ model: 'chat-model', input: 'query checks' });
    const cases: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=1.5', 'limit'],
      ['order=newest', 'order'],
      ['after=msg_not_in_this_response', 'after'],
      ['after=', 'after'],
      ['limit=1&limit=2', 'limit'],
    ];
    for (const [query, param] of cases) {
      const response = await request('GET', `/v1/responses/${stored.id}/input_items?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json(), query).toMatchObject({ error: { type: 'invalid_request_error', param } });
    }
    expect((await request('GET', `/v1/responses/${stored.id}/input_items?limit=100&order=desc`)).status).toBe(200);
    const stream = await request('GET', `/v1/responses/${stored.id}?stream=true`);
    expect(stream.status).toBe(400);
    expect(await stream.json()).toMatchObject({ error: { param: 'stream' } });
  });

  it("another account's key gets 404 for get, delete and input_items, and 400 for previous_response_id", async () => {
    const stored = await client.responses.create({ model: 'chat-model', input: 'private' });
    const notFound = { error: { message: `Response with id '${stored.id}' not found.`, type: 'invalid_request_error', code: 'not_found' } };
    for (const [method, path] of [
      ['GET', `/v1/responses/${stored.id}`],
      ['DELETE', `/v1/responses/${stored.id}`],
      ['GET', `/v1/responses/${stored.id}/input_items`],
    ] as const) {
      const response = await request(method, path, strangerSecret);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.json()).toEqual(notFound);
    }
    const continued = await harness.post('/v1/responses', { model: 'chat-model', input: 'hi', previous_response_id: stored.id }, strangerSecret);
    expect(continued.status).toBe(400);
    expect(await continued.json()).toEqual({
      error: {
        message: `Previous response with id '${stored.id}' not found.`,
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      },
    });
    // Untouched for its owner.
    expect((await client.responses.retrieve(stored.id)).id).toBe(stored.id);
    const unknown = await harness.post('/v1/responses', { model: 'chat-model', input: 'hi', previous_response_id: 'resp_never' }, secret);
    expect(unknown.status).toBe(400);
  });

  it('a streamed response with store is retrievable when its final event arrives', async () => {
    const stream = await client.responses.create({ model: 'chat-model', input: 'stream me', stream: true });
    let retrieved: unknown;
    let final: unknown;
    for await (const event of stream) {
      if (event.type !== 'response.completed') continue;
      final = event.response;
      // Read back while the stream is still open: the row was written before this event.
      retrieved = await (await request('GET', `/v1/responses/${event.response.id}`)).json();
    }
    expect(final).toMatchObject({ status: 'completed', store: true });
    expect(retrieved).toEqual(final);
  });

  it('a stream that fails mid-way is stored as failed', async () => {
    const stream = await client.responses.create({ model: 'mid-fail-model', input: 'fail me', stream: true });
    let failedId: string | undefined;
    for await (const event of stream) if (event.type === 'response.failed') failedId = event.response.id;
    expect(failedId).toBeDefined();
    const stored = await client.responses.retrieve(failedId!);
    expect(stored.status).toBe('failed');
    expect(stored.error).toMatchObject({ code: expect.any(String) });
  });

  it('store: false keeps nothing, so neither GET nor previous_response_id can find it', async () => {
    const unstored = await client.responses.create({ model: 'chat-model', input: 'forget me', store: false });
    expect((unstored as unknown as { store: unknown }).store).toBe(false);
    expect((await request('GET', `/v1/responses/${unstored.id}`)).status).toBe(404);
    const continued = await harness.post('/v1/responses', { model: 'chat-model', input: 'and?', previous_response_id: unstored.id }, secret);
    expect(continued.status).toBe(400);
    // A stored turn may continue from a stored one without being stored itself.
    const stored = await client.responses.create({ model: 'chat-model', input: 'keep me' });
    const next = await client.responses.create({ model: 'chat-model', input: 'next', previous_response_id: stored.id, store: false });
    expect(next.output_text).toBe('Reply to: next');
    expect((await request('GET', `/v1/responses/${next.id}`)).status).toBe(404);
  });

  it('a tool round trip through previous_response_id: the call in turn 1, its output as turn 2 input', async () => {
    const first = upstream.requests.length;
    const turn1 = await client.responses.create({ model: 'chat-model', input: 'What is the weather in Oslo?', tools: [weatherTool] });
    const call = turn1.output[0];
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_w1', name: 'get_weather', arguments: '{"city":"Oslo"}' });
    const turn2 = await client.responses.create({
      model: 'chat-model',
      previous_response_id: turn1.id,
      input: [{ type: 'function_call_output', call_id: 'call_w1', output: '{"temp_c":6}' }],
      tools: [weatherTool],
    });
    expect(turn2.output_text).toBe('Tool said: {"temp_c":6}');
    expect(conversationOf(upstream.requests[first + 1]!.body)).toEqual([
      'user: What is the weather in Oslo?',
      'assistant:  call_w1:get_weather({"city":"Oslo"})',
      'tool: {"temp_c":6}',
    ]);
    expect(upstream.requests[first + 1]!.body.messages).toContainEqual({ role: 'tool', tool_call_id: 'call_w1', content: '{"temp_c":6}' });

    const items = (await client.responses.inputItems.list(turn2.id, { order: 'asc' })).data;
    expect(items.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output']);
    expect(items[1]).toMatchObject({ id: call?.id, call_id: 'call_w1', name: 'get_weather', arguments: '{"city":"Oslo"}' });
    expect(items[2]).toMatchObject({ type: 'function_call_output', call_id: 'call_w1', output: '{"temp_c":6}' });
    expect(items[2]?.id).toMatch(/^fco_/);
  });

  it('a pass-through upstream is bypassed for previous_response_id: it gets the expanded conversation over Chat', async () => {
    const first = upstream.requests.length;
    const native = await client.responses.create({ model: 'native-model', input: 'native turn 1' });
    // Passed through: the upstream's own response object, stored under its id.
    expect(native.id).toMatch(/^resp_upstream_/);
    expect((native as unknown as Record<string, unknown>).upstream_extra).toBe('kept');
    const continued = await client.responses.create({ model: 'native-model', input: 'native turn 2', previous_response_id: native.id });
    expect(continued.output_text).toBe('Reply to: native turn 2');
    const sent = upstream.requests.slice(first);
    expect(sent.map((each) => each.path)).toEqual(['/v1/responses', '/v1/chat/completions']);
    expect(sent[1]!.body.previous_response_id).toBeUndefined();
    expect(conversationOf(sent[1]!.body)).toEqual(['user: native turn 1', 'assistant: Reply to: native turn 1', 'user: native turn 2']);
  });

  it('a passed-through stream is stored before its final event', async () => {
    const stream = await client.responses.create({ model: 'native-model', input: 'native stream', stream: true });
    let retrieved: unknown;
    let final: unknown;
    for await (const event of stream) {
      if (event.type !== 'response.completed') continue;
      final = event.response;
      retrieved = await (await request('GET', `/v1/responses/${event.response.id}`)).json();
    }
    expect(final).toMatchObject({ id: expect.stringMatching(/^resp_upstream_/), status: 'completed' });
    expect(retrieved).toEqual(final);
    const items = (await client.responses.inputItems.list((final as { id: string }).id)).data;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'native stream' }] });
  });

  it('other methods on stored responses stay unknown routes', async () => {
    const stored = await client.responses.create({ model: 'chat-model', input: 'routes' });
    const cancel = await harness.post(`/v1/responses/${stored.id}/cancel`, {}, secret);
    expect(cancel.status).toBe(404);
    expect(await cancel.json()).toMatchObject({ error: { message: `Invalid URL (POST /v1/responses/${stored.id}/cancel)` } });
    expect((await request('PUT', `/v1/responses/${stored.id}`)).status).toBe(404);
    const noKey = await fetch(`${harness.baseUrl}/v1/responses/${stored.id}`);
    expect(noKey.status).toBe(401);
  });
});
