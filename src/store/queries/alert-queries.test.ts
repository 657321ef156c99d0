/**
 * The alert queries of the Store (migration 0009) on SQLite and, when TOLLGATE_TEST_POSTGRES_URL
 * is set, PostgreSQL: low-balance crossings, claims that one of several stores gets, and the
 * outbox that two deliverers share without taking the same delivery twice.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, engines, type TestDatabase } from '../../../test/support/databases.js';
import { openStore } from '../open-store.js';
import type { AuditDraft, AccountRecord, NewAlertDelivery, Store } from '../store.js';

const unique = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 12)}`;
const USD = 1_000_000_000n;

describe.each(engines)('alert queries on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  let other: Store;
  let clock = new Date('2030-01-01T00:00:00.000Z');

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    store = await openStore(database.url, { now: () => clock });
    // A second store on the same database: another instance.
    other = await openStore(database.url, { now: () => clock, migrate: false });
  });

  afterAll(async () => {
    await other?.close();
    await store?.close();
    await database?.drop();
  });

  async function account(balanceNanos: bigint, thresholdNanos: bigint | null): Promise<string> {
    const id = unique('acct');
    await store.createAccount({ id, name: `name-${id}`, openingBalanceNanos: balanceNanos });
    if (thresholdNanos !== null) expect(await store.setLowBalanceThreshold(id, thresholdNanos)).toBe(true);
    return id;
  }

  async function crossingsOf(accountId: string): Promise<string[]> {
    return (await store.lowBalanceCrossings(10_000)).filter((crossing) => crossing.accountId === accountId).map((crossing) => crossing.direction);
  }

  function delivery(eventId: string, webhookId = 'wh_a', createdAt = clock): NewAlertDelivery {
    return { eventId, eventType: 'balance.low', webhookId, body: JSON.stringify({ id: eventId }), createdAt };
  }

  describe('low-balance threshold', () => {
    it('is set, read back, removed, and audited; an unknown account or a negative amount is refused', async () => {
      const id = await account(5n * USD, null);
      expect((await store.findAccount(id))?.lowBalanceThresholdNanos).toBeNull();
      const audit: AuditDraft<AccountRecord> = { adminTokenId: null, action: 'account.set_low_balance_threshold', view: (record) => ({ threshold: String(record.lowBalanceThresholdNanos) }) };
      expect(await store.setLowBalanceThreshold(id, 2n * USD, audit)).toBe(true);
      expect((await store.findAccount(id))?.lowBalanceThresholdNanos).toBe(2n * USD);
      const rows = (await store.listAudit({ targetId: id }, { limit: 10 })).rows.filter((row) => row.action === 'account.set_low_balance_threshold');
      expect(rows.map((row) => [row.before, row.after])).toEqual([[{ threshold: 'null' }, { threshold: String(2n * USD) }]]);
      expect(await store.setLowBalanceThreshold(id, null)).toBe(true);
      expect((await store.findAccount(id))?.lowBalanceThresholdNanos).toBeNull();
      expect(await store.setLowBalanceThreshold('acct_nobody', USD)).toBe(false);
      await expect(store.setLowBalanceThreshold(id, -1n)).rejects.toThrow(RangeError);
    });
  });

  describe('low-balance crossings', () => {
    it('lists an account below its threshold until claimed, then again once it is back above, until released', async () => {
      const id = await account(5n * USD, 2n * USD);
      expect(await crossingsOf(id)).toEqual([]);
      await store.debit(id, 4n * USD, 'spent');
      const [below] = (await store.lowBalanceCrossings(10_000)).filter((crossing) => crossing.accountId === id);
      expect(below).toEqual({ accountId: id, accountName: `name-${id}`, balanceNanos: USD, reservedNanos: 0n, thresholdNanos: 2n * USD, direction: 'below' });

      const claim = { kind: 'balance.low', subjectId: id, scope: '' };
      expect(await store.claimAlert(claim, [])).toBe(true);
      expect(await crossingsOf(id)).toEqual([]);
      await store.credit(id, USD, 'top-up');
      // Exactly at the threshold is not below it.
      expect(await crossingsOf(id)).toEqual(['recovered']);
      await store.releaseAlertClaim(claim);
      expect(await crossingsOf(id)).toEqual([]);
    });

    it('counts open holds against the balance', async () => {
      const id = await account(3n * USD, 2n * USD);
      const key = unique('key');
      await store.createKey({ id: key, accountId: id, name: null, prefix: key, hash: key, models: null, requestsPerWindow: null, tokensPerMinute: null, expiresAt: null, disabled: false, createdAt: clock });
      const hold = unique('hold');
      expect(await store.openHold({ id: hold, accountId: id, keyId: key, requestId: unique('req'), model: 'm', amountNanos: 2n * USD, expiresAt: new Date(clock.getTime() + 60_000) })).toBe(true);
      expect(await crossingsOf(id)).toEqual(['below']);
      await store.settleHold(hold, null);
      expect(await crossingsOf(id)).toEqual([]);
    });

    it('ignores accounts without a threshold, and a new threshold re-arms', async () => {
      const without = await account(0n, null);
      expect(await crossingsOf(without)).toEqual([]);
      const id = await account(USD, 2n * USD);
      expect(await store.claimAlert({ kind: 'balance.low', subjectId: id, scope: '' }, [])).toBe(true);
      expect(await crossingsOf(id)).toEqual([]);
      await store.setLowBalanceThreshold(id, 3n * USD);
      expect(await crossingsOf(id)).toEqual(['below']);
    });
  });

  describe('claims', () => {
    it('one of many concurrent claims on two stores wins, and only its deliveries are queued', async () => {
      const subject = unique('subject');
      const claim = { kind: 'balance.low', subjectId: subject, scope: '' };
      const attempt = (index: number) => (index % 2 === 0 ? store : other).claimAlert(claim, [delivery(`evt_${subject}_${index}`, 'wh_claims')]);
      const results: boolean[] = [];
      // Two SQLite connections in one process cannot wait for each other (better-sqlite3 waits
      // synchronously): there the claims take turns; PostgreSQL races them for real.
      if (engine === 'postgres') results.push(...(await Promise.all(Array.from({ length: 12 }, (_, index) => attempt(index)))));
      else for (let index = 0; index < 12; index++) results.push(await attempt(index));
      expect(results.filter(Boolean)).toHaveLength(1);
      const queued = (await store.listAlertDeliveries({}, { limit: 200 })).rows.filter((row) => row.eventId.startsWith(`evt_${subject}_`));
      expect(queued).toHaveLength(1);
      expect(queued[0]?.eventId).toBe(`evt_${subject}_${results.indexOf(true)}`);
    });

    it('a claim scoped by period fires once per period', async () => {
      const subject = unique('key');
      expect(await store.claimAlert({ kind: 'key_budget.80', subjectId: subject, scope: '2030-01-01' }, [])).toBe(true);
      expect(await other.claimAlert({ kind: 'key_budget.80', subjectId: subject, scope: '2030-01-01' }, [])).toBe(false);
      expect(await other.claimAlert({ kind: 'key_budget.80', subjectId: subject, scope: '2030-01-02' }, [])).toBe(true);
      expect(await other.claimAlert({ kind: 'key_budget.100', subjectId: subject, scope: '2030-01-01' }, [])).toBe(true);
    });
  });

  describe('outbox', () => {
    it('gives a due delivery to one taker at a time, for its own webhooks, and keeps it through a retry', async () => {
      const webhook = unique('wh');
      const eventId = unique('evt');
      await store.enqueueAlertDeliveries([delivery(eventId, webhook)]);
      // Queued again (a retried write): still one row.
      await store.enqueueAlertDeliveries([delivery(eventId, webhook)]);
      const lease = new Date(clock.getTime() + 15_000);
      expect(await store.claimAlertDeliveries({ webhookIds: ['wh_someone_else'], now: clock, leaseUntil: lease, limit: 10 })).toEqual([]);
      const take = (taker: Store) => taker.claimAlertDeliveries({ webhookIds: [webhook], now: clock, leaseUntil: lease, limit: 10 });
      const both = engine === 'postgres' ? await Promise.all([take(store), take(other)]) : [await take(store), await take(other)];
      expect(both.flat()).toHaveLength(1);
      const taken = both.flat()[0];
      expect(taken).toMatchObject({ eventId, webhookId: webhook, state: 'pending', attempts: 1, nextAttemptAt: lease, body: JSON.stringify({ id: eventId }) });

      // Leased: nobody else takes it until the lease ends.
      expect(await other.claimAlertDeliveries({ webhookIds: [webhook], now: new Date(clock.getTime() + 14_999), leaseUntil: lease, limit: 10 })).toEqual([]);
      const retryAt = new Date(clock.getTime() + 5_000);
      await store.finishAlertDelivery(taken!.id, { state: 'pending', nextAttemptAt: retryAt, error: 'answered HTTP 500' });
      expect(await other.claimAlertDeliveries({ webhookIds: [webhook], now: new Date(retryAt.getTime() - 1), leaseUntil: lease, limit: 10 })).toEqual([]);
      const again = await other.claimAlertDeliveries({ webhookIds: [webhook], now: retryAt, leaseUntil: new Date(retryAt.getTime() + 15_000), limit: 10 });
      expect(again).toMatchObject([{ id: taken!.id, eventId, attempts: 2, lastError: 'answered HTTP 500' }]);

      await other.finishAlertDelivery(taken!.id, { state: 'delivered', at: retryAt });
      // A late outcome of an older attempt changes nothing once delivered.
      await store.finishAlertDelivery(taken!.id, { state: 'abandoned', at: retryAt, error: 'late' });
      const [row] = (await store.listAlertDeliveries({ state: 'delivered' }, { limit: 200 })).rows.filter((each) => each.eventId === eventId);
      expect(row).toMatchObject({ state: 'delivered', attempts: 2, finishedAt: retryAt, lastError: null });
      expect(await store.claimAlertDeliveries({ webhookIds: [webhook], now: new Date(clock.getTime() + 3_600_000), leaseUntil: lease, limit: 10 })).toEqual([]);
    });

    it('records a delivery given up, lists newest first by page and state, and prunes old rows', async () => {
      clock = new Date('2030-02-01T00:00:00.000Z');
      const webhook = unique('wh');
      const ids = Array.from({ length: 5 }, () => unique('evt'));
      await store.enqueueAlertDeliveries(ids.map((id, index) => delivery(id, webhook, new Date(clock.getTime() + index))));
      const taken = await store.claimAlertDeliveries({ webhookIds: [webhook], now: new Date(clock.getTime() + 10), leaseUntil: new Date(clock.getTime() + 1_000), limit: 2 });
      expect(taken.map((row) => row.eventId)).toEqual(ids.slice(0, 2));
      await store.finishAlertDelivery(taken[0]!.id, { state: 'abandoned', at: clock, error: 'x'.repeat(2_000) });
      const abandoned = (await store.listAlertDeliveries({ state: 'abandoned' }, { limit: 200 })).rows.find((row) => row.eventId === ids[0]);
      expect(abandoned?.lastError).toHaveLength(500);

      const first = await store.listAlertDeliveries({ state: 'pending' }, { limit: 2 });
      expect(first.rows.map((row) => row.eventId)).toEqual([ids[4], ids[3]]);
      const second = await store.listAlertDeliveries({ state: 'pending' }, { limit: 2, after: first.next });
      expect(second.rows.map((row) => row.eventId)).toEqual([ids[2], ids[1]]);

      const before = (await store.listAlertDeliveries({}, { limit: 200 })).rows.length;
      expect(await store.pruneAlertDeliveries(new Date(clock.getTime() + 2), 1)).toBe(1);
      expect(await store.pruneAlertDeliveries(new Date(clock.getTime() + 2), 100)).toBeGreaterThanOrEqual(1);
      const left = (await store.listAlertDeliveries({}, { limit: 200 })).rows;
      expect(left.map((row) => row.eventId)).toEqual([ids[4], ids[3], ids[2]]);
      expect(left.length).toBeLessThan(before);
    });
  });
});
