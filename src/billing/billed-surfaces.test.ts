/**
 * The endpoint a request came through is what its charge is billed under, whoever settles its hold:
 * the request itself, the settle retrier once the database is back, or the expiry sweep after a
 * crash. The real BillingService on a real store, SQLite always and PostgreSQL when
 * TOLLGATE_TEST_POSTGRES_URL is set (the store's own paths are in store/charge-surfaces.test.ts).
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, engines, type TestDatabase } from '../../test/support/databases.js';
import type { Usage } from '../protocol/canonical.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { BillingService } from './billing-service.js';
import { createSettleRetrier } from './settle-retry.js';

const PRICES = { inputPerMillion: 1_000_000_000n, cachedInputPerMillion: 500_000_000n, outputPerMillion: 4_000_000_000n };
const USAGE: Usage = { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 10, reasoningTokens: 0 };
/** 1,000 input tokens at $1/M plus 10 output tokens at $4/M. */
const COST = 1_000_000n + 40_000n;

describe.each(engines)('billed surfaces on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  let billing: BillingService;
  let clock = Date.parse('2031-05-01T00:00:00.000Z');

  async function open(): Promise<void> {
    store = await openStore(database.url);
    billing = new BillingService({ store, prices: new Map([['gpt-test', PRICES]]), holdTtlSeconds: 60, now: () => new Date(clock) });
  }

  beforeEach(async () => {
    database = await createTestDatabase(engine);
    await open();
    await store.createAccount({ id: 'acct', name: 'acme', openingBalanceNanos: 1_000_000_000n });
    await store.createKey({ id: 'key', accountId: 'acct', name: null, prefix: 'sk-tg-surfac', hash: 'cd'.repeat(32), models: null, requestsPerWindow: null, tokensPerMinute: null, expiresAt: null, disabled: false, createdAt: new Date(clock) });
  });

  afterEach(async () => {
    await store.close().catch(() => undefined);
    await database.drop();
  });

  const reserve = (requestId: string, surface: 'responses' | 'chat-completions' | 'anthropic-messages' | 'embeddings') =>
    billing.reserve({ accountId: 'acct', keyId: 'key', requestId, model: 'gpt-test', surface, inputTokenBound: 2_000, maxOutputTokens: 100 });

  async function charges(): Promise<Array<[string | null, bigint, string | null]>> {
    return (await store.listLedger('acct')).filter((entry) => entry.kind === 'charge').map((entry) => [entry.requestId, entry.amountNanos, entry.surface]);
  }

  it('bills a settled request under the endpoint it was reserved for', async () => {
    const embedded = await reserve('req_embed', 'embeddings');
    const chatted = await reserve('req_chat', 'chat-completions');
    await Promise.all([billing.settle(embedded, USAGE), billing.settle(chatted, USAGE)]);
    expect(await charges()).toEqual([
      ['req_embed', COST, 'embeddings'],
      ['req_chat', COST, 'chat-completions'],
    ]);
  });

  it('bills a settlement the retrier makes once the database is back under the same endpoint', async () => {
    const hold = await reserve('req_retried', 'anthropic-messages');
    await store.close();
    await expect(billing.settle(hold, USAGE)).rejects.toThrow();
    // Each attempt goes to whichever store is open now, as a gateway's would after the database returns.
    const retrier = createSettleRetrier({ settle: (held, usage) => billing.settle(held, usage), logger: pino({ level: 'silent' }), maxAgeMs: 60_000, initialDelayMs: 10 });
    try {
      retrier.retry(hold, USAGE, clock);
      await open();
      await expect.poll(() => retrier.pending, { timeout: 10_000 }).toBe(0);
    } finally {
      await retrier.close();
    }
    expect(await charges()).toEqual([['req_retried', COST, 'anthropic-messages']]);
  });

  it("bills an expired hold's last checkpoint under its endpoint", async () => {
    const hold = await reserve('req_crashed', 'responses');
    await store.checkpointHolds([{ holdId: hold.id, expiresAt: new Date(clock + 1_000), costNanos: 123n, tokens: { inputTokens: 100, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0 } }]);
    clock += 2_000;
    expect(await billing.releaseExpired()).toBe(1);
    expect(await charges()).toEqual([['req_crashed', 123n, 'responses']]);
  });
});
