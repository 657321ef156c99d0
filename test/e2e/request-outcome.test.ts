/**
 * What became of each `/v1` answer (observability/request-outcome.ts), as the request log, the metrics and
 * the traces read it once the response has ended: filled from the moment the model is known, with
 * the target, the first byte, the usage and cost the settlement billed, and the error code (also of
 * a stream that failed mid-way). The real gateway on loopback, its outcomes read by an onResponse
 * hook added the way those readers add theirs.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { parseConfig } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/server/gateway.js';
import type { RequestOutcome } from '../../src/observability/request-outcome.js';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { testCatalog } from '../support/catalog.js';
import { createTestDatabase, engines, type TestDatabase } from '../support/databases.js';

describe.each(engines)('request outcomes on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  let gateway: Gateway;
  let baseUrl: string;
  /** By request id, as read when the response ended. */
  const outcomes = new Map<string, RequestOutcome | null>();

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    store = await openStore(database.url);
    gateway = await createGateway({ config: parseConfig(testCatalog(), 'test catalog'), store, limiter: createMemoryLimiter(), logger: pino({ level: 'silent' }), env: {} });
    gateway.app.addHook('onResponse', async (request) => {
      outcomes.set(request.id, request.outcome === null ? null : { ...request.outcome });
    });
    baseUrl = (await gateway.app.listen({ host: '127.0.0.1', port: 0 })).replace('localhost', '127.0.0.1');
  });
  afterAll(async () => {
    await gateway?.close();
    await store?.close();
    await database?.drop();
  });

  async function newKey(balanceUsd: string) {
    const account = await createAccount(store, { name: `outcome-${Math.random().toString(36).slice(2)}`, balanceUsd }, CLI_ACTOR);
    const created = await createKey(store, { accountRef: account.id }, CLI_ACTOR);
    return { accountId: account.id, keyId: created.key.id, secret: created.secret };
  }

  /** Sends, reads the whole answer, and returns the outcome read when it ended, with the request's charge. */
  async function answer(path: string, body: object, key: { accountId: string; secret: string }) {
    const started = Date.now();
    const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    const requestId = response.headers.get('x-request-id')!;
    await expect.poll(() => outcomes.has(requestId)).toBe(true);
    const charge = (await store.listLedger(key.accountId)).find((entry) => entry.kind === 'charge' && entry.requestId === requestId);
    return { status: response.status, text, outcome: outcomes.get(requestId), charge, started };
  }

  it('a JSON answer: who, what, which target, when the first byte left, and what the settlement billed', async () => {
    const key = await newKey('1');
    const { status, outcome, charge, started } = await answer('/v1/chat/completions', { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'hello there' }] }, key);
    expect(status).toBe(200);
    expect(charge).toBeDefined();
    expect(outcome).toEqual({
      accountId: key.accountId,
      keyId: key.keyId,
      surface: 'chat-completions',
      model: 'model-5.6-mini',
      target: 'sim/model-5.6-mini',
      failedTarget: null,
      stream: false,
      firstByteAt: expect.any(Number),
      usage: { inputTokens: charge!.inputTokens, cachedInputTokens: charge!.cachedInputTokens, outputTokens: charge!.outputTokens, reasoningTokens: charge!.reasoningTokens },
      costNanos: charge!.amountNanos,
      errorCode: null,
      toldCode: null,
      ended: expect.any(Promise),
    });
    expect(outcome!.firstByteAt!).toBeGreaterThanOrEqual(started);
  });

  it('a stream that fails mid-way: its error code, and the cost of what it produced, settled before it ended', async () => {
    const key = await newKey('1');
    const { status, text, outcome, charge } = await answer('/v1/responses', { model: 'mid-fail-model', input: 'hello there friend', stream: true }, key);
    expect(status).toBe(200);
    expect(text).toContain('event: response.failed');
    expect(charge).toBeDefined();
    expect(outcome).toMatchObject({ surface: 'responses', model: 'mid-fail-model', target: 'sim-fail-mid/mid-fail-model', stream: true, firstByteAt: expect.any(Number), costNanos: charge!.amountNanos, errorCode: 'upstream_error' });
  });

  it('a Messages stream that completes: no error code', async () => {
    const key = await newKey('1');
    const { status, outcome, charge } = await answer('/v1/messages', { model: 'model-5.6-mini', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], stream: true }, key);
    expect(status).toBe(200);
    expect(outcome).toMatchObject({ surface: 'anthropic-messages', stream: true, costNanos: charge!.amountNanos, errorCode: null });
  });

  it('refused for its balance once the model was known: the error code, no target, nothing billed', async () => {
    const key = await newKey('0');
    const { status, outcome } = await answer('/v1/chat/completions', { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'hello' }] }, key);
    expect(status).toBe(403);
    expect(outcome).toMatchObject({ model: 'model-5.6-mini', target: null, firstByteAt: null, usage: null, costNanos: 0n, errorCode: 'insufficient_balance' });
  });

  it('refused before a model was known: no outcome', async () => {
    const key = await newKey('1');
    const { status, outcome } = await answer('/v1/chat/completions', { model: 'no-such-model', messages: [{ role: 'user', content: 'hello' }] }, key);
    expect(status).toBe(503);
    expect(outcome).toBeNull();
  });
});
