/**
 * Group commit of holds through the real store, on SQLite always and on PostgreSQL when
 * TOLLGATE_TEST_POSTGRES_URL is set: operations that arrive together share one transaction, each
 * keeps its own result, one that fails does not sink the others, a transaction that fails rejects
 * every operation in it, and several stores (instances) on one database still never overspend.
 */
import { randomUUID } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestDatabase } from '../../test/support/databases.js';
import { startTcpProxy } from '../../test/support/tcp-proxy.js';
import { newAccountWithKey, openTestStore, type TestStore } from '../../test/support/test-store.js';
import { isDatabaseUnavailable } from './dependency-errors.js';
import { openStore } from './open-store.js';
import type { Charge, NewHold, Store } from './store.js';

const unique = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 12)}`;
const FUTURE = new Date(Date.now() + 3_600_000);
const PAST = new Date(Date.now() - 3_600_000);

describe.each(engines)('hold batches on %s', (engine) => {
  let opened: TestStore;
  let database: TestDatabase;
  let store: Store;
  let commits: number[];

  beforeAll(async () => {
    commits = [];
    opened = await openTestStore(engine, { onHoldCommit: (operations) => commits.push(operations) });
    ({ database, store } = opened);
  });

  afterAll(() => opened?.close());

  const newAccount = (balance: bigint) => newAccountWithKey(store, balance);

  const hold = (accountId: string, keyId: string, amountNanos: bigint, expiresAt = FUTURE): NewHold => ({
    id: unique('hold'),
    accountId,
    keyId,
    requestId: unique('req'),
    model: 'gpt-test',
    amountNanos,
    expiresAt,
  });

  const charge = (keyId: string, costNanos: bigint): Charge => ({
    requestId: unique('req'),
    keyId,
    model: 'gpt-test',
    costNanos,
    excessNanos: 0n,
    inputTokens: 10,
    cachedInputTokens: 0,
    outputTokens: 5,
    reasoningTokens: 0,
  });

  async function expectLedgerInvariant(accountId: string, on = store): Promise<void> {
    const entries = await on.listLedger(accountId);
    const sum = entries.reduce((total, entry) => total + (entry.kind === 'credit' ? entry.amountNanos : entry.kind === 'excess' ? 0n : -entry.amountNanos), 0n);
    expect((await on.findAccount(accountId))?.balanceNanos).toBe(sum);
  }

  it('commits 60 concurrent opens in one transaction, admitting exactly the 10 the balance covers', async () => {
    const { accountId, keyId } = await newAccount(10n * 7n);
    commits.length = 0;
    const results = await Promise.all(Array.from({ length: 60 }, () => store.openHold(hold(accountId, keyId, 7n))));
    expect(commits).toEqual([60]);
    expect(results.filter(Boolean)).toHaveLength(10);
    expect(await store.countOpenHolds(accountId)).toBe(10);
    expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 70n, reservedNanos: 70n });
  });

  it('decides each operation of a batch on its own, in the order they arrived', async () => {
    const { accountId, keyId } = await newAccount(100n);
    const settledBefore = hold(accountId, keyId, 10n);
    const open = hold(accountId, keyId, 30n);
    for (const each of [settledBefore, open]) expect(await store.openHold(each)).toBe(true);
    expect(await store.settleHold(settledBefore.id, null)).toBe(true);
    const fits = hold(accountId, keyId, 70n);
    const tooBig = hold(accountId, keyId, 1n);
    commits.length = 0;
    const results = await Promise.all([
      store.settleHold(settledBefore.id, charge(keyId, 5n)),
      store.openHold(fits),
      // 30 held + 70 held = the whole balance: nothing left for this one until the settle below.
      store.openHold(tooBig),
      store.settleHold(open.id, charge(keyId, 20n)),
      store.checkpointHolds([{ holdId: fits.id, expiresAt: FUTURE, costNanos: 3n, tokens: { inputTokens: 1, cachedInputTokens: 0, outputTokens: 2, reasoningTokens: 0 } }]),
      store.openHold(hold(accountId, keyId, 10n)),
    ]);
    expect(commits).toEqual([6]);
    expect(results).toEqual([false, true, false, true, undefined, true]);
    expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 80n, reservedNanos: 80n });
    expect((await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge').map((entry) => entry.amountNanos)).toEqual([20n]);
    await expectLedgerInvariant(accountId);
  });

  it('rejects only the operation that fails; the rest of its transaction commits', async () => {
    const { accountId, keyId } = await newAccount(1_000n);
    const settleFails = hold(accountId, keyId, 100n);
    const settles = hold(accountId, keyId, 100n);
    for (const each of [settleFails, settles]) expect(await store.openHold(each)).toBe(true);
    const good = [hold(accountId, keyId, 10n), hold(accountId, keyId, 20n)];
    commits.length = 0;
    const outcomes = await Promise.allSettled([
      store.openHold(good[0]!),
      // No such key: the hold's insert breaks a foreign key after its reservation was made.
      store.openHold(hold(accountId, 'no-such-key', 40n)),
      store.settleHold(settleFails.id, charge('no-such-key', 50n)),
      store.settleHold(settles.id, charge(keyId, 60n)),
      store.openHold(good[1]!),
    ]);
    expect(commits).toEqual([5]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
    for (const index of [1, 2]) expect((outcomes[index] as PromiseRejectedResult).reason).toMatchObject({ message: expect.stringMatching(/foreign key/i) });
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled').map((outcome) => outcome.value)).toEqual([true, true, true]);
    // The failed open reserved nothing, the failed settle left its hold open; the others stand.
    expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 940n, reservedNanos: 100n + 10n + 20n });
    expect(await store.countOpenHolds(accountId)).toBe(3);
    expect(await store.settleHold(settleFails.id, charge(keyId, 50n))).toBe(true);
    await expectLedgerInvariant(accountId);
  });

  it('rejects every operation of a transaction that cannot be written, and writes the next one', async () => {
    const { accountId, keyId } = await newAccount(1_000n);
    const outage = await outageOf(engine, database);
    try {
      const earlier = hold(accountId, keyId, 100n);
      expect(await outage.store.openHold(earlier)).toBe(true);
      await outage.takeAway();
      const checkpoint = { holdId: earlier.id, expiresAt: FUTURE, costNanos: 1n, tokens: { inputTokens: 1, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 } };
      const settled = await Promise.allSettled([
        outage.store.openHold(hold(accountId, keyId, 10n)),
        outage.store.settleHold(earlier.id, charge(keyId, 5n)),
        outage.store.checkpointHolds([checkpoint]),
      ]);
      expect(settled.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
      const reasons = settled.map((outcome) => (outcome as PromiseRejectedResult).reason as unknown);
      // One error for the whole transaction, and one the gateway answers with a 503.
      expect(new Set(reasons).size).toBe(1);
      expect(isDatabaseUnavailable(reasons[0])).toBe(true);
      expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 1_000n, reservedNanos: 100n });

      await outage.bringBack();
      expect(await outage.store.settleHold(earlier.id, charge(keyId, 5n))).toBe(true);
      expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 995n, reservedNanos: 0n });
      await expectLedgerInvariant(accountId);
    } finally {
      await outage.close();
    }
  });

  it('two instances on one database admit exactly 10 of 60 between them and settle each hold once', async () => {
    const { accountId, keyId } = await newAccount(10n * 7n);
    const other = await openStore(database.url);
    try {
      const stores = [store, other];
      const holds = Array.from({ length: 60 }, () => hold(accountId, keyId, 7n, PAST));
      const opened = await Promise.all(holds.map((each, index) => stores[index % 2]!.openHold(each)));
      expect(opened.filter(Boolean)).toHaveLength(10);
      const admitted = holds.filter((_, index) => opened[index]);
      // Every hold settled from both instances in opposite orders (one of each pair wins), while
      // on PostgreSQL both also sweep the holds as expired: no deadlock, each ends exactly once.
      // (On SQLite two stores in one process would wait on each other's write lock on one thread.)
      const [forward, backward, swept] = await Promise.all([
        Promise.all(admitted.map((each) => store.settleHold(each.id, charge(keyId, 1n)))),
        Promise.all([...admitted].reverse().map((each) => other.settleHold(each.id, charge(keyId, 1n)))),
        engine === 'postgres' ? Promise.all([store.releaseExpiredHolds(new Date()), other.releaseExpiredHolds(new Date())]) : Promise.resolve([0]),
      ]);
      const settled = [...forward, ...backward].filter(Boolean).length;
      const released = swept.reduce((total, count) => total + count, 0);
      expect(settled + released).toBe(10);
      expect(await store.countOpenHolds(accountId)).toBe(0);
      expect(await store.findAccount(accountId)).toMatchObject({ reservedNanos: 0n, balanceNanos: 70n - BigInt(settled) });
      expect((await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge')).toHaveLength(settled);
      await expectLedgerInvariant(accountId);
    } finally {
      await other.close();
    }
  });
});

interface Outage {
  /** A store whose database the test takes away and brings back. */
  store: Store;
  takeAway(): Promise<void>;
  bringBack(): Promise<void>;
  close(): Promise<void>;
}

/**
 * SQLite: another connection takes the write lock, so `BEGIN IMMEDIATE` fails after the busy
 * timeout (a few seconds). PostgreSQL: the store reaches the database through a proxy that stops.
 */
async function outageOf(engine: 'sqlite' | 'postgres', database: TestDatabase): Promise<Outage> {
  if (engine === 'sqlite') {
    const store = await openStore(database.url);
    const locker = new BetterSqlite3(database.url.slice('sqlite:'.length));
    return {
      store,
      takeAway: async () => void locker.exec('BEGIN IMMEDIATE'),
      bringBack: async () => void locker.exec('ROLLBACK'),
      close: async () => {
        if (locker.inTransaction) locker.exec('ROLLBACK');
        locker.close();
        await store.close();
      },
    };
  }
  const proxy = await startTcpProxy(new URL(database.url));
  const viaProxy = new URL(database.url);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  const store = await openStore(viaProxy.toString());
  return {
    store,
    takeAway: () => proxy.stop(),
    bringBack: () => proxy.start(),
    close: async () => {
      await store.close();
      await proxy.stop();
    },
  };
}
