/**
 * No upstream answer, whatever its size or shape, can take the gateway down or leave a hold open.
 * A real gateway process and a real upstream double that answers six million letters in one piece
 * of text (one delta, one JSON string), on every surface, streamed and not, passed through and
 * translated, reporting no usage so that the gateway counts the text itself. A run that long once
 * overflowed the stack of the token counter's regular expression: the process died of an unhandled
 * rejection on a Responses pass-through stream, and a non-streamed chat answered 500 with its hold
 * left open until its expiry.
 *
 * Each case checks that the client got the whole answer in its protocol, that the process is alive
 * and still serves another request, and that the request was charged once with its hold closed.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { usdToNanos } from '../../src/billing/money.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, engines, type TestDatabase } from '../support/databases.js';
import { startGatewayProcess, writeCatalog, type GatewayProcess } from '../support/gateway-process.js';
import { startUpstreamDouble, type ReceivedRequest, type UpstreamDouble } from '../support/upstream-double.js';

/** More than the ~5.6 million characters of one class that overflowed the old counter. */
const TEXT = 'x'.repeat(6_000_000);
const BALANCE_USD = '10';

const sseEvent = (fields: Record<string, unknown> & { type: string }) => `event: ${fields.type}\ndata: ${JSON.stringify(fields)}\n\n`;

const chatChunk = (fields: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'chatcmpl-huge', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', ...fields })}\n\n`;
const chatStream = () =>
  [
    chatChunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
    chatChunk({ choices: [{ index: 0, delta: { content: TEXT }, finish_reason: null }] }),
    chatChunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    'data: [DONE]\n\n',
  ].join('');
const chatJson = () => JSON.stringify({ id: 'chatcmpl-huge', object: 'chat.completion', created: 1, model: 'upstream-model', choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, finish_reason: 'stop' }] });

const message = { id: 'msg_huge', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], text: TEXT }] };
const responseObject = (status: string, output: unknown[]) => ({ id: 'resp_huge', object: 'response', created_at: 1, status, model: 'upstream-model', output, usage: null });
const responsesStream = () =>
  [
    sseEvent({ type: 'response.created', sequence_number: 0, response: responseObject('in_progress', []) }),
    sseEvent({ type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { ...message, status: 'in_progress', content: [] } }),
    sseEvent({ type: 'response.content_part.added', sequence_number: 2, item_id: 'msg_huge', output_index: 0, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } }),
    sseEvent({ type: 'response.output_text.delta', sequence_number: 3, item_id: 'msg_huge', output_index: 0, content_index: 0, delta: TEXT }),
    sseEvent({ type: 'response.output_text.done', sequence_number: 4, item_id: 'msg_huge', output_index: 0, content_index: 0, text: TEXT }),
    sseEvent({ type: 'response.completed', sequence_number: 5, response: responseObject('completed', [message]) }),
  ].join('');
const responsesJson = () => JSON.stringify(responseObject('completed', [message]));

const anthropicMessage = { id: 'msg_huge', type: 'message', role: 'assistant', model: 'upstream-model', stop_reason: null, stop_sequence: null };
const messagesStream = () =>
  [
    sseEvent({ type: 'message_start', message: { ...anthropicMessage, content: [] } }),
    sseEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: TEXT } }),
    sseEvent({ type: 'content_block_stop', index: 0 }),
    sseEvent({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null } }),
    sseEvent({ type: 'message_stop' }),
  ].join('');
const messagesJson = () => JSON.stringify({ ...anthropicMessage, content: [{ type: 'text', text: TEXT }], stop_reason: 'end_turn' });

/** The upstream: six million letters in its own wire format, for whichever API the gateway called. */
function hugeAnswer(request: ReceivedRequest, response: ServerResponse): void {
  const stream = request.body.stream === true;
  const api = request.path.endsWith('/responses') ? 'responses' : request.path.endsWith('/messages') ? 'messages' : 'chat';
  const text = { chat: stream ? chatStream : chatJson, responses: stream ? responsesStream : responsesJson, messages: stream ? messagesStream : messagesJson }[api]();
  response.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
  response.end(text);
}

/** The last SSE event of `text` is a `type` event, whole. */
function endsWithEvent(text: string, type: string): boolean {
  if (!text.endsWith('\n\n')) return false;
  const previousEnd = text.lastIndexOf('\n\n', text.length - 3);
  return text.startsWith(`event: ${type}\n`, previousEnd === -1 ? 0 : previousEnd + 2);
}

interface Case {
  name: string;
  path: string;
  body: Record<string, unknown>;
  /** Whether `text` is the whole answer, ended in its protocol, with the six million letters in it. */
  whole: (text: string) => boolean;
}

const question = [{ role: 'user', content: 'Say x, a lot.' }];
const chatStreamWhole = (text: string) => text.includes(TEXT) && text.endsWith('data: [DONE]\n\n');
const chatJsonWhole = (text: string) => (JSON.parse(text) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content === TEXT;
const responsesStreamWhole = (text: string) => text.includes(TEXT) && endsWithEvent(text, 'response.completed');
const responsesJsonWhole = (text: string) => {
  const body = JSON.parse(text) as { status: string; output: Array<{ content?: Array<{ text?: string }> }> };
  return body.status === 'completed' && body.output.some((item) => item.content?.[0]?.text === TEXT);
};
const messagesStreamWhole = (text: string) => text.includes(TEXT) && endsWithEvent(text, 'message_stop');
const messagesJsonWhole = (text: string) => (JSON.parse(text) as { content: Array<{ text?: string }> }).content[0]?.text === TEXT;

const chat = (model: string, stream: boolean) => ({ model, messages: question, stream });
const responses = (model: string, stream: boolean) => ({ model, input: 'Say x, a lot.', stream, store: false });
const messages = (model: string, stream: boolean) => ({ model, max_tokens: 500, messages: question, stream });

const cases: Case[] = [
  { name: 'chat, streamed, passed through', path: '/v1/chat/completions', body: chat('passthrough-model', true), whole: chatStreamWhole },
  { name: 'chat, not streamed, passed through', path: '/v1/chat/completions', body: chat('passthrough-model', false), whole: chatJsonWhole },
  { name: 'responses, streamed, passed through', path: '/v1/responses', body: responses('passthrough-model', true), whole: responsesStreamWhole },
  { name: 'responses, not streamed, passed through', path: '/v1/responses', body: responses('passthrough-model', false), whole: responsesJsonWhole },
  { name: 'responses, streamed, translated onto a chat upstream', path: '/v1/responses', body: responses('translated-model', true), whole: responsesStreamWhole },
  { name: 'responses, not streamed, translated onto a chat upstream', path: '/v1/responses', body: responses('translated-model', false), whole: responsesJsonWhole },
  { name: 'messages, streamed, passed through', path: '/v1/messages', body: messages('claude-model', true), whole: messagesStreamWhole },
  { name: 'messages, not streamed, passed through', path: '/v1/messages', body: messages('claude-model', false), whole: messagesJsonWhole },
  { name: 'messages, streamed, translated onto a chat upstream', path: '/v1/messages', body: messages('translated-model', true), whole: messagesStreamWhole },
  { name: 'messages, not streamed, translated onto a chat upstream', path: '/v1/messages', body: messages('translated-model', false), whole: messagesJsonWhole },
  { name: 'chat, streamed, translated onto an Anthropic upstream', path: '/v1/chat/completions', body: chat('claude-model', true), whole: chatStreamWhole },
  { name: 'chat, not streamed, translated onto an Anthropic upstream', path: '/v1/chat/completions', body: chat('claude-model', false), whole: chatJsonWhole },
];

describe.each(engines)('an upstream answer of six million letters, on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  let upstream: UpstreamDouble;
  let env: Record<string, string>;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    store = await openStore(database.url);
    upstream = await startUpstreamDouble(hugeAnswer);
    const timeouts = { first_byte_ms: 10_000, idle_ms: 30_000 };
    const prices = { input: '1', cached_input: '0.5', output: '4' };
    const catalog = {
      providers: [
        { name: 'openai', type: 'openai', base_url: upstream.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts },
        { name: 'openai-chat', type: 'openai', api: 'chat', base_url: upstream.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts },
        { name: 'anthropic', type: 'anthropic', base_url: upstream.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts },
        { name: 'sim', type: 'simulated' },
      ],
      models: [
        { id: 'passthrough-model', prices, max_output_tokens: 512, targets: [{ provider: 'openai', model: 'upstream-model' }] },
        { id: 'translated-model', prices, max_output_tokens: 512, targets: [{ provider: 'openai-chat', model: 'upstream-model' }] },
        { id: 'claude-model', prices, max_output_tokens: 512, targets: [{ provider: 'anthropic', model: 'upstream-model' }] },
        { id: 'sim-model', prices, max_output_tokens: 512, targets: [{ provider: 'sim', model: 'sim-model' }] },
      ],
    };
    env = { TOLLGATE_DATABASE_URL: database.url, TOLLGATE_CONFIG: writeCatalog(catalog), TEST_UPSTREAM_KEY: 'sk-upstream', TOLLGATE_ACCEPT_LOCAL_LIMITS: '1' };
  }, 120_000);

  // One process for every case; a case that killed it gets a new one for the next, so that each
  // case is judged on its own.
  beforeEach(async () => {
    if (gateway === undefined || gateway.child.exitCode !== null || gateway.child.signalCode !== null) gateway = await startGatewayProcess(env);
  }, 60_000);

  afterAll(async () => {
    await gateway?.kill();
    await upstream?.close();
    await store?.close();
    await database?.drop();
  }, 60_000);

  async function post(path: string, body: Record<string, unknown>, secret: string): Promise<{ status: number; requestId: string | null; text: string }> {
    const response = await fetch(`${gateway!.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
      // An answer that hangs fails here rather than at the test's time limit.
      signal: AbortSignal.timeout(45_000),
    });
    return { status: response.status, requestId: response.headers.get('x-request-id'), text: await response.text() };
  }

  /** The account was charged once for `requestId`, and nothing of it is held any more. */
  async function expectSettled(accountId: string, requestId: string | null): Promise<void> {
    const charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toEqual([expect.objectContaining({ requestId })]);
    const charged = charges[0]!.amountNanos;
    expect(charged).toBeGreaterThan(0n);
    expect(await store.countOpenHolds(accountId)).toBe(0);
    expect((await store.findAccount(accountId))!.balanceNanos).toBe(usdToNanos(BALANCE_USD) - charged);
  }

  it.each(cases)('$name', async (testCase) => {
    const account = await createAccount(store, { name: `huge-${Math.random().toString(36).slice(2)}`, balanceUsd: BALANCE_USD }, CLI_ACTOR);
    const { secret } = await createKey(store, { accountRef: account.id }, CLI_ACTOR);

    const answer = await post(testCase.path, testCase.body, secret);
    expect(answer.status, answer.text.slice(0, 500)).toBe(200);
    expect(testCase.whole(answer.text), answer.text.slice(-500)).toBe(true);
    await expectSettled(account.id, answer.requestId);

    // The process is alive and serves the next request, which is billed as usual.
    expect(gateway!.child.exitCode, gateway!.output()).toBeNull();
    const other = await createAccount(store, { name: `after-${Math.random().toString(36).slice(2)}`, balanceUsd: BALANCE_USD }, CLI_ACTOR);
    const otherKey = await createKey(store, { accountRef: other.id }, CLI_ACTOR);
    const next = await post('/v1/chat/completions', { model: 'sim-model', messages: question }, otherKey.secret);
    expect(next.status, next.text.slice(0, 500)).toBe(200);
    await expectSettled(other.id, next.requestId);
    expect(gateway!.child.exitCode, gateway!.output()).toBeNull();
  }, 120_000);
});
