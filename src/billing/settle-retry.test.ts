/**
 * The settle retrier against a real SQLite store that goes away (closed) and comes back (reopened
 * on the same file), with the real BillingService doing each attempt.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Usage } from '../protocol/canonical.js';
import { openStore } from '../store/open-store.js';
import type { MoneyStore, AccountStore, OperationsStore } from '../store/store.js';
import { BillingService, type Hold } from './billing-service.js';
import type { ModelPrices } from './prices.js';
import { createSettleRetrier, type SettleRetrier } from './settle-retry.js';

const PRICES: ModelPrices = { inputPerMillion: 2_500_000_000n, cachedInputPerMillion: 1_250_000_000n, outputPerMillion: 10_000_000_000n };
const OPENING_BALANCE = 1_000_000_000n;
const USAGE: Usage = { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 100, reasoningTokens: 0 };
/** 1,000 input tokens at $2.50/M plus 100 output tokens at $10/M. */
const COST = 2_500_000n + 1_000_000n;

let folder: string;
let url: string;
let store: MoneyStore & AccountStore & OperationsStore;
let billing: BillingService;
let logLines: Array<{ level: number; msg: string; holdId?: string; attempts?: number }>;
let retrier: SettleRetrier | undefined;

async function open(): Promise<void> {
  store = await openStore(url);
  billing = new BillingService({ store, prices: new Map([['gpt-test', PRICES]]), holdTtlSeconds: 60 });
}

function makeRetrier(options: { maxAgeMs: number; initialDelayMs: number }): SettleRetrier {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as (typeof logLines)[number]);
      done();
    },
  });
  // Each attempt goes to whichever store is open now, as a gateway's would after the database returns.
  retrier = createSettleRetrier({ settle: (hold, usage) => billing.settle(hold, usage), logger: pino(stream), ...options });
  return retrier;
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function reserve(requestId: string): Promise<Hold> {
  return billing.reserve({ accountId: 'acct', keyId: 'key', requestId, model: 'gpt-test', surface: 'chat-completions', inputTokenBound: 1_000, maxOutputTokens: 1_000 });
}

async function charges(): Promise<number> {
  return (await store.listLedger('acct')).filter((entry) => entry.kind === 'charge').length;
}

beforeEach(async () => {
  folder = mkdtempSync(join(tmpdir(), 'tollgate-settle-retry-'));
  url = `sqlite:${join(folder, 'tollgate.db')}`;
  logLines = [];
  await open();
  await store.createAccount({ id: 'acct', name: 'acme', openingBalanceNanos: OPENING_BALANCE });
  await store.createKey({
    id: 'key',
    accountId: 'acct',
    name: null,
    prefix: 'sk-tg-abcdef',
    hash: 'ab'.repeat(32),
    models: null,
    requestsPerWindow: null,
    tokensPerMinute: null,
    expiresAt: null,
    disabled: false,
    createdAt: new Date(),
  });
});

afterEach(async () => {
  await retrier?.close();
  retrier = undefined;
  await store.close().catch(() => undefined);
  rmSync(folder, { recursive: true, force: true });
});

describe('settle retrier', () => {
  it('settles once the database is back, billing exactly once', async () => {
    const hold = await reserve('req_1');
    await store.close();
    // The gateway's own attempt fails while the database is away.
    await expect(billing.settle(hold, USAGE)).rejects.toThrow();
    const retrying = makeRetrier({ maxAgeMs: 60_000, initialDelayMs: 20 });
    retrying.retry(hold, USAGE, Date.now());
    await eventually(() => logLines.some((line) => line.msg.includes('failed again')));
    expect(retrying.pending).toBe(1);

    await open();
    await eventually(() => retrying.pending === 0);
    expect(await charges()).toBe(1);
    expect((await store.findAccount('acct'))!.balanceNanos).toBe(OPENING_BALANCE - COST);
    expect(await store.countOpenHolds('acct')).toBe(0);
    expect(logLines.at(-1)).toMatchObject({ msg: 'settled after retrying', holdId: hold.id });
  });

  it('never bills twice when the first attempt did commit after all', async () => {
    const hold = await reserve('req_2');
    expect((await billing.settle(hold, USAGE)).billedNanos).toBe(COST);
    // As if the commit's acknowledgement had been lost: the gateway saw an error and hands it over.
    const retrying = makeRetrier({ maxAgeMs: 60_000, initialDelayMs: 1 });
    retrying.retry(hold, USAGE, Date.now());
    retrying.retry(hold, USAGE, Date.now());
    await eventually(() => retrying.pending === 0);
    expect(await charges()).toBe(1);
    expect((await store.findAccount('acct'))!.balanceNanos).toBe(OPENING_BALANCE - COST);
  });

  it('gives up once the hold is older than maxAgeMs, and says what went unbilled', async () => {
    const hold = await reserve('req_3');
    await store.close();
    const retrying = makeRetrier({ maxAgeMs: 150, initialDelayMs: 20 });
    retrying.retry(hold, USAGE, Date.now());
    await eventually(() => retrying.pending === 0);
    const abandoned = logLines.find((line) => line.msg.includes('abandoned'));
    expect(abandoned).toMatchObject({ level: 50, holdId: hold.id });
    expect(abandoned!.msg).toContain('expired');
    expect(abandoned!.attempts).toBeGreaterThan(1);
    // A hold already too old is not even taken.
    retrying.retry({ ...hold, id: 'hold_old' }, USAGE, Date.now() - 1_000);
    expect(retrying.pending).toBe(0);
  });

  it('makes a last attempt for waiting settlements on close', async () => {
    const hold = await reserve('req_4');
    const retrying = makeRetrier({ maxAgeMs: 600_000, initialDelayMs: 60_000 });
    retrying.retry(hold, USAGE, Date.now());
    expect(retrying.pending).toBe(1);
    await retrying.close();
    expect(retrying.pending).toBe(0);
    expect(await charges()).toBe(1);
    // Closed: nothing more is taken.
    retrying.retry({ ...hold, id: 'hold_after_close' }, USAGE, Date.now());
    expect(retrying.pending).toBe(0);
  });

  it('keeps at most maxPending settlements waiting', async () => {
    const hold = await reserve('req_5');
    const retrying = createSettleRetrier({
      settle: (held, usage) => billing.settle(held, usage),
      logger: pino({ level: 'silent' }),
      maxAgeMs: 60_000,
      initialDelayMs: 60_000,
      maxPending: 1,
    });
    retrier = retrying;
    retrying.retry(hold, USAGE, Date.now());
    retrying.retry({ ...hold, id: 'hold_second' }, USAGE, Date.now());
    expect(retrying.pending).toBe(1);
  });
});
