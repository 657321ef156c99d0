/**
 * A charge is durable before the last byte of its answer: a client that received a complete answer
 * was billed, crash or not (docs/architecture.md, Money). A real gateway process, a real upstream
 * double whose usage is known only at the end of its answer; the moment the client has the final
 * frame (or the last byte of a JSON body), the test reads the ledger, then kills the gateway with
 * SIGKILL, starts a new one on the same database, and finds the charge there, once, at the exact
 * cost of the upstream's usage.
 *
 * The ordering is checked, not hoped for: on the pass-through routes the upstream keeps its
 * connection open after its last event, so a gateway that settled only once the upstream's answer
 * was over (or after its own last write) could not have written the charge when the client saw the
 * final frame.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, engines, type TestDatabase } from '../support/databases.js';
import { startGatewayProcess, writeCatalog, type GatewayProcess } from '../support/gateway-process.js';
import { startUpstreamDouble, type ReceivedRequest, type UpstreamDouble } from '../support/upstream-double.js';

/** The usage every upstream answer reports, only in its last events: input 321 (100 cached), output 45. */
const USAGE = { input: 321, cached: 100, output: 45 };
const PRICES = { input: '1', cached_input: '0.5', output: '4' };
const OPENAI_COST = costOfTokens(USAGE.input - USAGE.cached, usdToNanos(PRICES.input)) + costOfTokens(USAGE.cached, usdToNanos(PRICES.cached_input)) + costOfTokens(USAGE.output, usdToNanos(PRICES.output));
/** Anthropic's input here has no cache reads or writes. */
const ANTHROPIC_COST = costOfTokens(USAGE.input, usdToNanos(PRICES.input)) + costOfTokens(USAGE.output, usdToNanos(PRICES.output));

const chatChunk = (fields: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'chatcmpl-durable', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', ...fields })}\n\n`;
const CHAT_STREAM = [
  chatChunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
  chatChunk({ choices: [{ index: 0, delta: { content: 'Paid for, ' }, finish_reason: null }] }),
  chatChunk({ choices: [{ index: 0, delta: { content: 'every word.' }, finish_reason: null }] }),
  chatChunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
  chatChunk({ choices: [], usage: { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output, prompt_tokens_details: { cached_tokens: USAGE.cached } } }),
  'data: [DONE]\n\n',
].join('');
const CHAT_JSON = JSON.stringify({
  id: 'chatcmpl-durable',
  object: 'chat.completion',
  created: 1,
  model: 'upstream-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Paid for, every word.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output, prompt_tokens_details: { cached_tokens: USAGE.cached } },
});

const responsesEvent = (sequence: number, fields: Record<string, unknown> & { type: string }) => `event: ${fields.type}\ndata: ${JSON.stringify({ ...fields, sequence_number: sequence })}\n\n`;
const responseObject = (status: string, usage: Record<string, unknown> | null, text?: string) => ({
  id: 'resp_durable',
  object: 'response',
  created_at: 1,
  status,
  model: 'upstream-model',
  output: text === undefined ? [] : [{ id: 'msg_durable', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], text }] }],
  usage,
});
const RESPONSES_STREAM = [
  responsesEvent(0, { type: 'response.created', response: responseObject('in_progress', null) }),
  responsesEvent(1, { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_durable', type: 'message', status: 'in_progress', role: 'assistant', content: [] } }),
  responsesEvent(2, { type: 'response.content_part.added', item_id: 'msg_durable', output_index: 0, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } }),
  responsesEvent(3, { type: 'response.output_text.delta', item_id: 'msg_durable', output_index: 0, content_index: 0, delta: 'Paid for, every word.' }),
  responsesEvent(4, { type: 'response.output_text.done', item_id: 'msg_durable', output_index: 0, content_index: 0, text: 'Paid for, every word.' }),
  responsesEvent(5, { type: 'response.completed', response: responseObject('completed', { input_tokens: USAGE.input, input_tokens_details: { cached_tokens: USAGE.cached }, output_tokens: USAGE.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: USAGE.input + USAGE.output }, 'Paid for, every word.') }),
].join('');

const messagesEvent = (fields: Record<string, unknown> & { type: string }) => `event: ${fields.type}\ndata: ${JSON.stringify(fields)}\n\n`;
const MESSAGES_STREAM = [
  messagesEvent({ type: 'message_start', message: { id: 'msg_durable', type: 'message', role: 'assistant', model: 'upstream-model', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: USAGE.input, output_tokens: 1 } } }),
  messagesEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  messagesEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Paid for, every word.' } }),
  messagesEvent({ type: 'content_block_stop', index: 0 }),
  messagesEvent({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: USAGE.input, output_tokens: USAGE.output } }),
  messagesEvent({ type: 'message_stop' }),
].join('');

/** The upstream for every case. `tailOpen`: after its last event it keeps the connection open (until the test closes it). */
function upstreamAnswer(options: { tailOpen: boolean }) {
  return (request: ReceivedRequest, response: ServerResponse) => {
    if (request.body.stream !== true) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(CHAT_JSON);
      return;
    }
    const text = request.path.endsWith('/responses') ? RESPONSES_STREAM : request.path.endsWith('/messages') ? MESSAGES_STREAM : CHAT_STREAM;
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    if (options.tailOpen) response.write(text);
    else response.end(text);
  };
}

interface Case {
  name: string;
  path: string;
  body: Record<string, unknown>;
  /** The end of the client's answer: the final frame (streams) or the whole JSON body. */
  complete: (received: string) => boolean;
  cost: bigint;
  /** Whether the upstream keeps its connection open after its last event (pass-through routes). */
  tailOpen: boolean;
}

const question = [{ role: 'user', content: 'Will I be billed?' }];
const cases: Case[] = [
  { name: 'chat, streamed, passed through', path: '/v1/chat/completions', body: { model: 'durable-model', messages: question, stream: true }, complete: (text) => text.endsWith('data: [DONE]\n\n'), cost: OPENAI_COST, tailOpen: true },
  { name: 'chat, not streamed, passed through', path: '/v1/chat/completions', body: { model: 'durable-model', messages: question }, complete: wholeJson, cost: OPENAI_COST, tailOpen: true },
  { name: 'responses, streamed, passed through', path: '/v1/responses', body: { model: 'durable-model', input: 'Will I be billed?', stream: true, store: false }, complete: endsWithEvent('response.completed'), cost: OPENAI_COST, tailOpen: true },
  { name: 'messages, streamed, passed through', path: '/v1/messages', body: { model: 'claude-durable', max_tokens: 500, messages: question, stream: true }, complete: endsWithEvent('message_stop'), cost: ANTHROPIC_COST, tailOpen: true },
  { name: 'responses, streamed, translated onto a chat upstream', path: '/v1/responses', body: { model: 'translated-model', input: 'Will I be billed?', stream: true, store: false }, complete: endsWithEvent('response.completed'), cost: OPENAI_COST, tailOpen: false },
];

/** Whether the last whole frame received is a `type` event. */
function endsWithEvent(type: string): (text: string) => boolean {
  return (text) => {
    if (!text.endsWith('\n\n')) return false;
    const previousEnd = text.lastIndexOf('\n\n', text.length - 3);
    return text.startsWith(`event: ${type}\n`, previousEnd === -1 ? 0 : previousEnd + 2);
  };
}

/** Whether the whole JSON body has arrived. */
function wholeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Reads the answer until `complete` says it is whole; resolves with the text at that moment. */
async function readUntilComplete(response: Response, complete: (text: string) => boolean): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (value !== undefined) text += decoder.decode(value, { stream: true });
    if (complete(text)) return text;
    if (done) throw new Error(`the answer ended before it was complete:\n${text}`);
  }
}

describe.each(engines)('a complete answer is billed before its last byte, on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  let upstream: UpstreamDouble;
  let env: Record<string, string>;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    store = await openStore(database.url);
    upstream = await startUpstreamDouble(upstreamAnswer({ tailOpen: true }));
    const catalog = {
      providers: [
        // Idle timeouts far beyond the test: a lingering upstream must not end the answer for it.
        { name: 'openai', type: 'openai', base_url: upstream.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts: { first_byte_ms: 5_000, idle_ms: 120_000 } },
        { name: 'openai-chat', type: 'openai', api: 'chat', base_url: upstream.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts: { first_byte_ms: 5_000, idle_ms: 120_000 } },
        { name: 'anthropic', type: 'anthropic', base_url: upstream.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts: { first_byte_ms: 5_000, idle_ms: 120_000 } },
      ],
      models: [
        { id: 'durable-model', prices: PRICES, max_output_tokens: 512, targets: [{ provider: 'openai', model: 'upstream-model' }] },
        { id: 'translated-model', prices: PRICES, max_output_tokens: 512, targets: [{ provider: 'openai-chat', model: 'upstream-model' }] },
        { id: 'claude-durable', prices: PRICES, max_output_tokens: 512, targets: [{ provider: 'anthropic', model: 'upstream-model' }] },
      ],
    };
    // Each case kills its gateway and starts another on the same database while the dead one's
    // heartbeat is still fresh; that one serves the next case.
    env = { TOLLGATE_DATABASE_URL: database.url, TOLLGATE_CONFIG: writeCatalog(catalog), TEST_UPSTREAM_KEY: 'sk-upstream', TOLLGATE_ACCEPT_LOCAL_LIMITS: '1' };
  }, 120_000);

  afterAll(async () => {
    await gateway?.kill();
    await upstream?.close();
    await store?.close();
    await database?.drop();
  }, 60_000);

  it.each(cases)('$name', async (testCase) => {
    upstream.answer(upstreamAnswer({ tailOpen: testCase.tailOpen }));
    gateway ??= await startGatewayProcess(env);
    const account = await createAccount(store, { name: `durable-${Math.random().toString(36).slice(2)}`, balanceUsd: '1' }, CLI_ACTOR);
    const { secret } = await createKey(store, { accountRef: account.id }, CLI_ACTOR);

    const response = await fetch(`${gateway.baseUrl}${testCase.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(testCase.body),
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    await readUntilComplete(response, testCase.complete);

    // The client has the whole answer: the charge is already in the ledger, at the exact cost.
    const chargesNow = (await store.listLedger(account.id)).filter((entry) => entry.kind === 'charge');
    await gateway.kill();
    gateway = undefined;
    expect(chargesNow).toEqual([expect.objectContaining({ requestId, amountNanos: testCase.cost, outputTokens: USAGE.output })]);

    // And after a crash right then, a new process on the same database finds it there, once (that
    // process serves the next case).
    gateway = await startGatewayProcess(env);
    const ledger = await store.listLedger(account.id);
    const charges = ledger.filter((entry) => entry.kind === 'charge');
    expect(charges).toEqual([expect.objectContaining({ requestId, amountNanos: testCase.cost, inputTokens: USAGE.input, outputTokens: USAGE.output })]);
    expect(charges[0]!.note ?? '').not.toMatch(/expired/);
    expect(await store.countOpenHolds(account.id)).toBe(0);
    expect((await store.findAccount(account.id))!.balanceNanos).toBe(usdToNanos('1') - testCase.cost);
  }, 120_000);
});
