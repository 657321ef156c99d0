/**
 * The Responses WebSocket (`GET /v1/responses` upgraded, docs/wire-protocols.md §22) through the
 * real server: OpenAI's own WebSocket client gets the events the SSE stream has, in the same order;
 * a turn continues the socket's last response with only its new items (`store: false`), over a
 * Chat upstream (translated) and a Responses upstream (passed through), and after a warm-up
 * (`generate: false`) that called no model and billed nothing; a stored response is continued as
 * over HTTP (the next one names it); every turn is billed once, at the catalog's prices, and logged
 * once; another account's response cannot be continued; a bad key gets no socket; bad messages and
 * failed upstreams get error events and leave the socket usable; one response at a time; the size and idle
 * limits close the socket with their codes; a socket closed mid-answer stops the upstream and is
 * billed for what was produced; the request rate limit counts each turn; the 101 has a request id.
 */
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import type { ResponsesServerEvent } from 'openai/resources/responses/responses';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import type { LedgerEntry } from '../../src/store/store.js';
import { testCatalog } from '../support/catalog.js';
import { settledCharges } from '../support/charges.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble, type UpstreamReply } from '../support/openai-upstream.js';
import { finalResponse, openResponsesSocket, socketUrl, turnText, type SocketEvent } from '../support/responses-socket-client.js';
import { waitFor } from '../support/wait-for.js';
import { textOf, weatherTool } from '../support/weather-tool.js';

/** The test catalog's prices (test/support/catalog.ts), in nano-USD per million tokens. */
const PRICES = { input: usdToNanos('1'), cached: usdToNanos('0.5'), output: usdToNanos('4') };

/** The upstream double's answer, in Chat or Responses terms: a tool call when asked about the weather, then words about its output. */
function replyTo(body: Record<string, unknown>): UpstreamReply {
  const items = (Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : [{ role: 'user', content: body.input }]) as Array<Record<string, unknown>>;
  const last = items.at(-1)!;
  if (last.role === 'tool') return { content: `Tool said: ${textOf(last.content)}` };
  if (last.type === 'function_call_output') return { content: `Tool said: ${String(last.output)}` };
  const text = textOf(last.content);
  if (text.includes('weather') && Array.isArray(body.tools) && body.tools.length > 0) return { toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] };
  return { content: `Reply to: ${text}` };
}

/** What a Chat upstream was sent, as role + text (assistant tool calls as `id:name(arguments)`). */
function chatConversation(body: Record<string, unknown>): string[] {
  return (body.messages as Array<Record<string, unknown>>).map((message) => {
    const calls = (message.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }> | undefined) ?? [];
    const callText = calls.map((call) => ` ${call.id}:${call.function.name}(${call.function.arguments})`).join('');
    const id = typeof message.tool_call_id === 'string' ? ` (${message.tool_call_id})` : '';
    return `${String(message.role)}${id}: ${textOf(message.content)}${callText}`;
  });
}

/** What a Responses upstream was sent, item by item. */
function responsesConversation(body: Record<string, unknown>): string[] {
  return (body.input as Array<Record<string, unknown>>).map((item) => {
    if (item.type === 'function_call') return `function_call ${String(item.call_id)}:${String(item.name)}(${String(item.arguments)})`;
    if (item.type === 'function_call_output') return `function_call_output ${String(item.call_id)}: ${String(item.output)}`;
    return `${String(item.role)}: ${textOf(item.content)}`;
  });
}

/** The cost of a turn's reported usage at the catalog's prices. */
function costOfUsage(usage: { input_tokens: number; input_tokens_details?: { cached_tokens?: number }; output_tokens: number }): bigint {
  const cached = usage.input_tokens_details?.cached_tokens ?? 0;
  return costOfTokens(usage.input_tokens - cached, PRICES.input) + costOfTokens(cached, PRICES.cached) + costOfTokens(usage.output_tokens, PRICES.output);
}

/** The cost of a ledger entry's own token counts at the catalog's prices. */
function costOfEntry(entry: LedgerEntry): bigint {
  return costOfTokens(entry.inputTokens - entry.cachedInputTokens, PRICES.input) + costOfTokens(entry.cachedInputTokens, PRICES.cached) + costOfTokens(entry.outputTokens, PRICES.output);
}

/** Sends one turn on OpenAI's WebSocket client and collects its events up to the final one. */
function sdkTurn(socket: ResponsesWS, body: Omit<Parameters<ResponsesWS['send']>[0], 'type'>): Promise<ResponsesServerEvent[]> {
  return new Promise((resolve, reject) => {
    const events: ResponsesServerEvent[] = [];
    const onEvent = (event: ResponsesServerEvent): void => {
      events.push(event);
      if (event.type === 'response.completed' || event.type === 'response.failed' || event.type === 'response.incomplete' || event.type === 'error') {
        socket.off('event', onEvent);
        if (event.type === 'response.completed') resolve(events);
        else reject(new Error(`the turn ended with ${JSON.stringify(event)}`));
      }
    };
    socket.on('event', onEvent);
    socket.send({ type: 'response.create', ...body });
  });
}

/** The upgrade attempted with `headers`, refused: its status and body (there must be no socket). */
async function refusedUpgrade(baseUrl: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const socket = new WebSocket(socketUrl(baseUrl), { headers });
  let opened = false;
  socket.on('open', () => (opened = true));
  socket.on('error', () => undefined);
  const [, response] = (await once(socket, 'unexpected-response')) as [unknown, IncomingMessage];
  let raw = '';
  for await (const chunk of response) raw += String(chunk);
  socket.terminate();
  expect(opened).toBe(false);
  return { status: response.statusCode ?? 0, body: JSON.parse(raw) as unknown };
}

describe.each(engines)('the Responses WebSocket, on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let slowUpstream: UpstreamDouble;
  const SLOW_CHUNKS = 100;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ reply: replyTo });
    slowUpstream = await startOpenAIUpstream({ chunks: SLOW_CHUNKS, chunkDelayMs: 20 });
    const catalog = testCatalog() as { providers: unknown[]; models: unknown[] };
    const provider = (name: string, api: string, baseUrl: string) => ({ name, type: 'openai', api, base_url: baseUrl, api_key_env: 'TEST_UPSTREAM_KEY' });
    const model = (id: string, providerName: string) => ({ id, prices: { input: '1', cached_input: '0.5', output: '4' }, max_output_tokens: 512, targets: [{ provider: providerName, model: 'upstream-model' }] });
    catalog.providers.push(provider('chat-only', 'chat', upstream.baseUrl), provider('native', 'both', upstream.baseUrl), provider('slow-chat', 'chat', slowUpstream.baseUrl));
    catalog.models.push(model('chat-model', 'chat-only'), model('native-model', 'native'), model('slow-chat-model', 'slow-chat'));
    harness = await startHarness({ engine, catalog, env: { TEST_UPSTREAM_KEY: 'sk-upstream' } });
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
    await slowUpstream?.close();
  });

  it("OpenAI's WebSocket client gets the events of the SSE stream, in the same order, with the same text", async () => {
    const { secret } = await harness.newAccount('10');
    const client = harness.client(secret);
    const request = { model: 'model-5.6', input: 'Name three rivers of Europe, briefly.', store: false } as const;

    const socket = new ResponsesWS(client);
    const errors: unknown[] = [];
    socket.on('error', (error) => errors.push(error));
    const overSocket = await sdkTurn(socket, request);
    socket.close();

    const overHttp: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ ...request, stream: true })) overHttp.push(event);

    expect(errors).toEqual([]);
    // The simulated model answers the same request the same way: the two streams must match event for event.
    expect(overSocket.map((event) => event.type)).toEqual(overHttp.map((event) => event.type));
    expect(overSocket.map((event) => (event as { sequence_number?: number }).sequence_number)).toEqual(overHttp.map((_event, index) => index));
    expect(overSocket.filter((event) => event.type === 'response.output_text.delta').length).toBeGreaterThan(1);
    const deltas = (events: Array<{ type: string; delta?: unknown }>) => events.filter((event) => event.type === 'response.output_text.delta').map((event) => String(event.delta));
    expect(deltas(overSocket)).toEqual(deltas(overHttp));
    const socketFinal = overSocket.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    const httpFinal = overHttp.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(socketFinal.response.output_text ?? textOf((socketFinal.response.output[0] as { content?: unknown }).content)).toBe(deltas(overSocket).join(''));
    expect(socketFinal.response.usage).toEqual(httpFinal.response.usage);
    expect(socketFinal.response.id).not.toBe(httpFinal.response.id);
    expect(socketFinal.response.id).toMatch(/^resp_/);
  });

  describe.each([
    { name: 'a Chat upstream (translated)', model: 'chat-model', path: '/v1/chat/completions' },
    { name: 'a Responses upstream (passed through)', model: 'native-model', path: '/v1/responses' },
  ])('a tool round trip with store: false over $name', ({ model, path }) => {
    it('sends the upstream the whole conversation on the second turn, which sent only the tool output', async () => {
      const { secret } = await harness.newAccount('10');
      const socket = new ResponsesWS(harness.client(secret));
      const errors: unknown[] = [];
      socket.on('error', (error) => errors.push(error));
      const before = upstream.requests.length;

      const first = await sdkTurn(socket, { model, store: false, tools: [weatherTool], input: 'What is the weather in Oslo?' });
      const firstResponse = (first.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response;
      const call = firstResponse.output.find((item) => item.type === 'function_call');
      expect(call).toMatchObject({ type: 'function_call', call_id: 'call_w1', name: 'get_weather', arguments: '{"city":"Oslo"}' });

      const second = await sdkTurn(socket, {
        model,
        store: false,
        tools: [weatherTool],
        previous_response_id: firstResponse.id,
        input: [{ type: 'function_call_output', call_id: 'call_w1', output: '{"temperature":3}' }],
      });
      socket.close();
      const secondResponse = (second.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response;
      expect(errors).toEqual([]);
      expect(secondResponse.output_text ?? textOf((secondResponse.output[0] as { content?: unknown }).content)).toBe('Tool said: {"temperature":3}');
      expect(second.filter((event) => event.type === 'response.output_text.delta').map((event) => (event as { delta: string }).delta).join('')).toBe('Tool said: {"temperature":3}');

      const sent = upstream.requests.slice(before);
      expect(sent.map((each) => each.path)).toEqual([path, path]);
      const last = sent[1]!.body;
      // Nothing was stored: the upstream cannot be asked to continue anything, it is sent it all.
      expect(last.previous_response_id).toBeUndefined();
      if (path === '/v1/chat/completions') {
        expect(chatConversation(last)).toEqual(['user: What is the weather in Oslo?', 'assistant:  call_w1:get_weather({"city":"Oslo"})', 'tool (call_w1): {"temperature":3}']);
      } else {
        expect(responsesConversation(last)).toEqual(['user: What is the weather in Oslo?', 'function_call call_w1:get_weather({"city":"Oslo"})', 'function_call_output call_w1: {"temperature":3}']);
        expect(last.store).toBe(false);
      }
    });
  });

  it('continues a stored response (store: true) as HTTP does: the next response names it, and the upstream reads it all', async () => {
    const { secret } = await harness.newAccount('10');
    const client = await openResponsesSocket(harness.baseUrl, secret);
    const first = finalResponse(await client.turn({ model: 'chat-model', store: true, input: 'first question' })) as { id: string; store: boolean };
    expect(first.store).toBe(true);
    const second = finalResponse(await client.turn({ model: 'chat-model', store: true, previous_response_id: first.id, input: 'second question' })) as { id: string; previous_response_id: unknown };
    expect(second.previous_response_id).toBe(first.id);
    expect(chatConversation(upstream.requests.at(-1)!.body)).toEqual(['user: first question', 'assistant: Reply to: first question', 'user: second question']);
    // A third turn, not stored, continues the stored second one with its whole history.
    const third = finalResponse(await client.turn({ model: 'chat-model', store: false, previous_response_id: second.id, input: 'third question' })) as { id: string };
    const fourth = await client.turn({ model: 'chat-model', store: false, previous_response_id: third.id, input: 'fourth question' });
    expect(turnText(fourth)).toBe('Reply to: fourth question');
    client.socket.close();
    expect(chatConversation(upstream.requests.at(-1)!.body)).toEqual([
      'user: first question',
      'assistant: Reply to: first question',
      'user: second question',
      'assistant: Reply to: second question',
      'user: third question',
      'assistant: Reply to: third question',
      'user: fourth question',
    ]);
    const stored = (await (await fetch(`${harness.baseUrl}/v1/responses/${second.id}`, { headers: { authorization: `Bearer ${secret}` } })).json()) as Record<string, unknown>;
    expect(stored).toMatchObject({ id: second.id, previous_response_id: first.id });
    expect((await fetch(`${harness.baseUrl}/v1/responses/${third.id}`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(404);
  });

  it('continues a warm-up (generate: false) with its input first; the warm-up called no model and billed nothing', async () => {
    const { secret, accountId } = await harness.newAccount('10');
    const client = await openResponsesSocket(harness.baseUrl, secret);
    const before = upstream.requests.length;

    client.send({ type: 'response.create', model: 'chat-model', store: false, generate: false, input: [{ type: 'message', role: 'developer', content: 'Answer tersely.' }] });
    const warmUp = await client.untilTurnEnds();
    expect(warmUp.map((event) => event.type)).toEqual(['response.created', 'response.completed']);
    const warmResponse = finalResponse(warmUp);
    expect(warmResponse).toMatchObject({ status: 'completed', output: [], usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } });
    expect((warmUp[0]!.response as { id: string }).id).toBe(warmResponse.id);
    expect(upstream.requests.length).toBe(before);
    expect(await harness.store.countOpenHolds(accountId)).toBe(0);
    expect(await harness.store.listLedger(accountId)).toEqual([expect.objectContaining({ kind: 'credit' })]);

    const turn = await client.turn({ model: 'chat-model', store: false, previous_response_id: warmResponse.id, input: 'hello there' });
    expect(turnText(turn)).toBe('Reply to: hello there');
    client.socket.close();

    expect(upstream.requests.length).toBe(before + 1);
    const conversation = chatConversation(upstream.requests.at(-1)!.body);
    expect(conversation).toHaveLength(2);
    expect(conversation[0]).toMatch(/^(developer|system): Answer tersely\.$/);
    expect(conversation[1]).toBe('user: hello there');
    const charges = await settledCharges(harness, accountId, '10');
    expect(charges).toHaveLength(1);
  });

  it('bills each of N turns on one socket exactly once, at the catalog prices of its usage', async () => {
    const { secret, accountId, keyId } = await harness.newAccount('10');
    const client = await openResponsesSocket(harness.baseUrl, secret);
    const usages: Array<Parameters<typeof costOfUsage>[0]> = [];
    let previous: string | undefined;
    for (const question of ['What is a ledger?', 'And a hold?', 'And a settlement?']) {
      const turn = await client.turn({ model: 'model-5.6', store: false, input: question, ...(previous === undefined ? {} : { previous_response_id: previous }) });
      const response = finalResponse(turn) as { id: string; usage: Parameters<typeof costOfUsage>[0] };
      expect(turn.filter((event) => event.type === 'error')).toEqual([]);
      usages.push(response.usage);
      previous = response.id;
    }
    client.socket.close();
    // Each turn read the whole conversation so far: its input grew.
    expect(usages[1]!.input_tokens).toBeGreaterThan(usages[0]!.input_tokens);
    expect(usages[2]!.input_tokens).toBeGreaterThan(usages[1]!.input_tokens);

    const charges = await settledCharges(harness, accountId, '10');
    expect(charges).toHaveLength(3);
    expect(new Set(charges.map((charge) => charge.requestId)).size).toBe(3);
    charges.forEach((charge, index) => {
      const usage = usages[index]!;
      expect(charge).toMatchObject({ keyId, model: 'model-5.6', surface: 'responses', inputTokens: usage.input_tokens, outputTokens: usage.output_tokens });
      expect(charge.amountNanos).toBe(costOfUsage(usage));
      expect(charge.amountNanos).toBeGreaterThan(0n);
    });
    // The request log has one row per turn (the upgrade is not an answer), each with its charge.
    await waitFor(async () => (await harness.store.listRequestLog({ accountId }, { limit: 10 })).rows.length >= 3);
    const rows = [...(await harness.store.listRequestLog({ accountId }, { limit: 10 })).rows].reverse();
    expect(rows.map((row) => ({ requestId: row.requestId, status: row.status, surface: row.surface, stream: row.stream, costNanos: row.costNanos }))).toEqual(
      charges.map((charge) => ({ requestId: charge.requestId, status: 200, surface: 'responses', stream: true, costNanos: charge.amountNanos })),
    );
    expect(rows.map((row) => row.requestId)).not.toContain(client.upgradeHeaders['x-request-id']);
  });

  it("does not continue another account's response, stored or only remembered by its socket", async () => {
    const owner = await harness.newAccount('10');
    const stranger = await harness.newAccount('10');
    const stored = (await (await harness.post('/v1/responses', { model: 'chat-model', input: 'the secret plan', store: true }, owner.secret)).json()) as { id: string };
    expect(stored.id).toMatch(/^resp_/);
    const ownerSocket = await openResponsesSocket(harness.baseUrl, owner.secret);
    const remembered = finalResponse(await ownerSocket.turn({ model: 'chat-model', store: false, input: 'the other plan' })) as { id: string };

    const strangerSocket = await openResponsesSocket(harness.baseUrl, stranger.secret);
    const before = upstream.requests.length;
    for (const id of [stored.id, remembered.id]) {
      const refused = await strangerSocket.turn({ model: 'chat-model', previous_response_id: id, input: 'tell me' });
      expect(refused).toEqual([
        { type: 'error', status: 400, error: { type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id', message: `Previous response with id '${id}' not found.` } },
      ]);
    }
    expect(upstream.requests.length).toBe(before);
    strangerSocket.socket.close();
    expect(await settledCharges(harness, stranger.accountId, '10')).toEqual([]);

    // Its owner continues it, from another socket (from the store).
    const continued = await ownerSocket.turn({ model: 'chat-model', previous_response_id: stored.id, input: 'and then?' });
    expect(turnText(continued)).toBe('Reply to: and then?');
    ownerSocket.socket.close();
    expect(chatConversation(upstream.requests.at(-1)!.body)).toEqual(['user: the secret plan', 'assistant: Reply to: the secret plan', 'user: and then?']);
  });

  it('refuses the upgrade with a bad key or none: HTTP 401 as the POST gets it, no socket', async () => {
    for (const key of ['sk-tg-not-a-real-key', null]) {
      const refused = await refusedUpgrade(harness.baseUrl, key === null ? {} : { authorization: `Bearer ${key}` });
      expect(refused.status).toBe(401);
      const posted = await harness.post('/v1/responses', { model: 'model-5.6', input: 'hi' }, key);
      expect(posted.status).toBe(401);
      expect(refused.body).toEqual(await posted.json());
      expect(refused.body).toMatchObject({ error: { message: expect.any(String) } });
    }
  });

  it('answers malformed messages with 400 error events and stays usable', async () => {
    const { secret, accountId } = await harness.newAccount('10');
    const client = await openResponsesSocket(harness.baseUrl, secret);
    const bad: Array<string | Buffer> = [
      'not json at all',
      '[{"type":"response.create"}]',
      '"response.create"',
      JSON.stringify({ type: 'session.update', session: {} }),
      JSON.stringify({ model: 'model-5.6', input: 'no type' }),
      Buffer.from(JSON.stringify({ type: 'response.create', model: 'model-5.6', input: 'in a binary frame' })),
      JSON.stringify({ type: 'response.create', input: 'no model' }),
      JSON.stringify({ type: 'response.create', model: 'model-5.6', input: 'bad temperature', temperature: 'hot' }),
    ];
    for (const message of bad) {
      client.socket.send(message, { binary: Buffer.isBuffer(message) });
      const [event] = await client.untilTurnEnds();
      expect(event, String(message)).toMatchObject({ type: 'error', status: 400, error: { type: 'invalid_request_error' } });
      expect(typeof (event!.error as { message: unknown }).message).toBe('string');
    }
    expect((client.events[3]!.error as { code?: unknown }).code).toBe('invalid_value');

    const turn = await client.turn({ model: 'model-5.6', input: 'still there?' });
    expect(turn.at(-1)!.type).toBe('response.completed');
    expect(turnText(turn).length).toBeGreaterThan(0);
    client.socket.close();
    // Only the one good turn was billed.
    expect(await settledCharges(harness, accountId, '10')).toHaveLength(1);
  });

  it('ends a turn whose upstream fails with response.failed (mid-answer) or a 5xx error event (before it), and stays usable', async () => {
    const { secret } = await harness.newAccount('10');
    const client = await openResponsesSocket(harness.baseUrl, secret);
    const midway = await client.turn({ model: 'mid-fail-model', input: 'fail midway' });
    expect(midway[0]!.type).toBe('response.created');
    expect(midway.at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: expect.any(String) } } });
    const before = await client.turn({ model: 'broken-model', input: 'fail at once' });
    expect(before).toEqual([{ type: 'error', status: expect.any(Number), error: expect.objectContaining({ message: expect.any(String) }) }]);
    expect(before[0]!.status as number).toBeGreaterThanOrEqual(500);
    expect((await client.turn({ model: 'model-5.6', input: 'and now?' })).at(-1)!.type).toBe('response.completed');
    client.socket.close();
  });

  it('refuses a second response.create while one runs (response_in_progress); the first completes', async () => {
    const { secret, accountId } = await harness.newAccount('10');
    const client = await openResponsesSocket(harness.baseUrl, secret);
    client.send({ type: 'response.create', model: 'slow-model', input: 'a slow answer please' });
    client.send({ type: 'response.create', model: 'slow-model', input: 'me too' });
    const events: SocketEvent[] = [];
    while (events.at(-1)?.type !== 'response.completed') events.push(await client.next());

    const errors = events.filter((event) => event.type === 'error');
    expect(errors).toEqual([{ type: 'error', status: 400, error: expect.objectContaining({ type: 'invalid_request_error', code: 'response_in_progress' }) }]);
    expect(events.filter((event) => event.type === 'response.created')).toHaveLength(1);
    expect(turnText(events).length).toBeGreaterThan(0);
    expect(JSON.stringify(finalResponse(events))).not.toContain('me too');

    // Once it ended, the next one runs.
    const next = await client.turn({ model: 'model-5.6', input: 'now me' });
    expect(next.at(-1)!.type).toBe('response.completed');
    client.socket.close();
    expect(await settledCharges(harness, accountId, '10')).toHaveLength(2);
  });

  it('stops the upstream when the socket closes mid-answer, and bills what was produced', async () => {
    const { secret, accountId } = await harness.newAccount('10');
    const client = await openResponsesSocket(harness.baseUrl, secret);
    const abortedBefore = slowUpstream.abortedCount();
    client.send({ type: 'response.create', model: 'slow-chat-model', store: false, input: 'talk for a while' });
    let deltas = 0;
    while (deltas < 3) if ((await client.next()).type === 'response.output_text.delta') deltas += 1;
    client.socket.close();
    expect((await client.closed).code).toBe(1005);

    await waitFor(async () => slowUpstream.abortedCount() === abortedBefore + 1, 5_000);
    const charges = await settledCharges(harness, accountId, '10');
    expect(charges).toHaveLength(1);
    const charge = charges[0]!;
    expect(charge.outputTokens).toBeGreaterThanOrEqual(3);
    expect(charge.outputTokens).toBeLessThan(SLOW_CHUNKS);
    expect(charge.inputTokens).toBeGreaterThan(0);
    expect(charge.amountNanos).toBe(costOfEntry(charge));
    const fullAnswer = costOfTokens(charge.inputTokens - charge.cachedInputTokens, PRICES.input) + costOfTokens(charge.cachedInputTokens, PRICES.cached) + costOfTokens(SLOW_CHUNKS, PRICES.output);
    expect(charge.amountNanos).toBeLessThan(fullAnswer);
    // One request log row, for a client gone mid-answer.
    await waitFor(async () => (await harness.store.listRequestLog({ accountId }, { limit: 10 })).rows.length >= 1);
    const rows = (await harness.store.listRequestLog({ accountId }, { limit: 10 })).rows;
    expect(rows.map((row) => ({ requestId: row.requestId, status: row.status, costNanos: row.costNanos }))).toEqual([{ requestId: charge.requestId, status: 200, costNanos: charge.amountNanos }]);
  });

  it('counts each turn against the key’s request limit (the upgrade is a request too): the turn past it gets a 429 event', async () => {
    const { secret, accountId } = await harness.newAccount('10', { requestsPerWindow: 3 });
    const client = await openResponsesSocket(harness.baseUrl, secret);
    for (const question of ['one', 'two']) expect((await client.turn({ model: 'model-5.6', input: question })).at(-1)!.type).toBe('response.completed');
    const refused = await client.turn({ model: 'model-5.6', input: 'three' });
    expect(refused).toEqual([{ type: 'error', status: 429, error: expect.objectContaining({ message: expect.any(String) }) }]);
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    // A warm-up calls no model: it is not a request against the limit.
    client.send({ type: 'response.create', model: 'model-5.6', generate: false, input: 'warm' });
    expect((await client.untilTurnEnds()).map((event) => event.type)).toEqual(['response.created', 'response.completed']);
    client.socket.close();
    expect(await settledCharges(harness, accountId, '10')).toHaveLength(2);
  });

  it('gives the 101 an x-request-id, one per socket', async () => {
    const { secret } = await harness.newAccount('10');
    const first = await openResponsesSocket(harness.baseUrl, secret);
    const second = await openResponsesSocket(harness.baseUrl, secret);
    first.socket.close();
    second.socket.close();
    expect(first.upgradeHeaders['x-request-id']).toMatch(/^req_/);
    expect(second.upgradeHeaders['x-request-id']).toMatch(/^req_/);
    expect(first.upgradeHeaders['x-request-id']).not.toBe(second.upgradeHeaders['x-request-id']);
  });
});

describe('the Responses WebSocket under small limits', () => {
  /** A small message limit (and the default idle time, so that a slow test run is not cut by it). */
  let sized: Harness;
  /** A short idle time, and HTTP receive timeouts far shorter still: they must not cut an open socket. */
  let idling: Harness;
  const MAX_BODY_BYTES = 4096;
  const IDLE_MS = 400;

  beforeAll(async () => {
    const withLimits = (limits: Record<string, number>) => ({ ...(testCatalog() as Record<string, unknown>), limits });
    sized = await startHarness({ catalog: withLimits({ max_body_bytes: MAX_BODY_BYTES }) });
    idling = await startHarness({ catalog: withLimits({ socket_idle_ms: IDLE_MS, headers_timeout_ms: 150, request_timeout_ms: 150, connections_check_interval_ms: 50 }) });
  });
  afterAll(async () => {
    await sized?.close();
    await idling?.close();
  });

  it('answers a message within max_body_bytes, closes the socket (1009) on one beyond it, and bills only the first', async () => {
    const { secret, accountId } = await sized.newAccount('10');
    const client = await openResponsesSocket(sized.baseUrl, secret);
    const within = { type: 'response.create', model: 'model-5.6', input: `fits ${'x'.repeat(MAX_BODY_BYTES - 200)}` };
    expect(Buffer.byteLength(JSON.stringify(within))).toBeLessThan(MAX_BODY_BYTES);
    client.send(within);
    expect((await client.untilTurnEnds()).at(-1)!.type).toBe('response.completed');

    const beyond = { type: 'response.create', model: 'model-5.6', input: `too big ${'x'.repeat(MAX_BODY_BYTES)}` };
    client.send(beyond);
    expect((await client.closed).code).toBe(1009);
    const charges = await settledCharges(sized, accountId, '10');
    expect(charges).toHaveLength(1);
    expect(charges[0]!.inputTokens).toBeLessThan(MAX_BODY_BYTES);
  });

  it('closes a socket idle for socket_idle_ms (1001), counting from the end of its last response, and not while one runs', async () => {
    const { secret } = await idling.newAccount('10');
    const client = await openResponsesSocket(idling.baseUrl, secret);
    // A response longer than the idle time (the slow simulated model) does not count as idle.
    const started = Date.now();
    const turn = await client.turn({ model: 'slow-model', input: 'a slow answer please' });
    expect(turn.at(-1)!.type).toBe('response.completed');
    expect(Date.now() - started).toBeGreaterThan(IDLE_MS);
    const ended = Date.now();
    const closed = await client.closed;
    expect(closed.code).toBe(1001);
    expect(Date.now() - ended).toBeGreaterThanOrEqual(IDLE_MS - 50);
  });
});
