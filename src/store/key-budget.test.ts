/**
 * Key budgets and key administration in the store, on SQLite and PostgreSQL: the budget guard in
 * the hold's transaction (never more than the budget, however many holds race), spend moved to the
 * hold's period by settlement and by expiry, periods as rows, and the key changes with their
 * revision bumps and audit rows.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, engines, type TestDatabase } from '../../test/support/databases.js';
import { openStore } from './open-store.js';
import { KeyBudgetExceededError, type ApiKeyRecord, type BudgetWindow, type Charge, type KeyBudget, type NewHold, type Store } from './store.js';

const unique = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 12)}`;
const DAY_ONE: BudgetWindow = { period: 'day', start: new Date('2030-01-01T00:00:00Z') };
const DAY_TWO: BudgetWindow = { period: 'day', start: new Date('2030-01-02T00:00:00Z') };

describe.each(engines)('key budgets in the store on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    store = await openStore(database.url);
  });

  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  async function newKey(balanceNanos: bigint, budget?: KeyBudget): Promise<ApiKeyRecord> {
    const accountId = unique('acct');
    await store.createAccount({ id: accountId, name: accountId, openingBalanceNanos: balanceNanos });
    const key: ApiKeyRecord = {
      id: unique('key'),
      accountId,
      name: null,
      prefix: 'sk-tg-test',
      hash: randomBytes(32).toString('hex'),
      models: null,
      requestsPerWindow: null,
      tokensPerMinute: null,
      expiresAt: null,
      disabled: false,
      createdAt: new Date(),
      ...(budget === undefined ? {} : { budget }),
    };
    await store.createKey(key);
    return key;
  }

  function hold(key: ApiKeyRecord, amountNanos: bigint, window: BudgetWindow | null = DAY_ONE, expiresAt = new Date(Date.now() + 60_000)): NewHold {
    return {
      id: unique('hold'),
      accountId: key.accountId,
      keyId: key.id,
      requestId: unique('req'),
      model: 'gpt-test',
      amountNanos,
      expiresAt,
      ...(window === null ? {} : { keyBudget: window }),
    };
  }

  function charge(key: ApiKeyRecord, costNanos: bigint): Charge {
    return { requestId: unique('req'), keyId: key.id, model: 'gpt-test', costNanos, excessNanos: 0n, inputTokens: 10, cachedInputTokens: 0, outputTokens: 5, reasoningTokens: 0 };
  }

  it('opens holds while the key budget covers them, then refuses with KeyBudgetExceededError and reserves nothing', async () => {
    const key = await newKey(1_000_000n, { limitNanos: 100n, period: 'day' });
    expect(await store.openHold(hold(key, 60n))).toBe(true);
    await expect(store.openHold(hold(key, 41n))).rejects.toBeInstanceOf(KeyBudgetExceededError);
    expect(await store.openHold(hold(key, 40n))).toBe(true);
    await expect(store.openHold(hold(key, 1n))).rejects.toBeInstanceOf(KeyBudgetExceededError);
    // A hold larger than the whole budget, on a period with no row yet.
    await expect(store.openHold(hold(key, 101n, DAY_TWO))).rejects.toBeInstanceOf(KeyBudgetExceededError);
    expect(await store.countOpenHolds(key.accountId)).toBe(2);
    expect(await store.findAccount(key.accountId)).toMatchObject({ reservedNanos: 100n });
    expect(await store.keySpend(key.id, DAY_ONE)).toEqual({ spentNanos: 0n, reservedNanos: 100n });
    expect(await store.keySpend(key.id, DAY_TWO)).toEqual({ spentNanos: 0n, reservedNanos: 0n });
  });

  it('the balance refuses first (false, the spec 403), the budget second', async () => {
    const key = await newKey(50n, { limitNanos: 100n, period: 'total' });
    const total: BudgetWindow = { period: 'total', start: new Date(0) };
    expect(await store.openHold(hold(key, 51n, total))).toBe(false);
    expect(await store.openHold(hold(key, 50n, total))).toBe(true);
    expect(await store.keySpend(key.id, total)).toEqual({ spentNanos: 0n, reservedNanos: 50n });
  });

  it('settlement moves the charge to the period spend and frees the rest of the hold', async () => {
    const key = await newKey(1_000_000n, { limitNanos: 100n, period: 'day' });
    const first = hold(key, 70n);
    expect(await store.openHold(first)).toBe(true);
    expect(await store.settleHold(first.id, charge(key, 25n))).toBe(true);
    expect(await store.keySpend(key.id, DAY_ONE)).toEqual({ spentNanos: 25n, reservedNanos: 0n });
    // 75 left: a second settlement of nothing leaves the spend alone.
    const second = hold(key, 75n);
    expect(await store.openHold(second)).toBe(true);
    expect(await store.settleHold(second.id, null)).toBe(true);
    expect(await store.settleHold(second.id, charge(key, 75n))).toBe(false);
    expect(await store.keySpend(key.id, DAY_ONE)).toEqual({ spentNanos: 25n, reservedNanos: 0n });
    await expect(store.openHold(hold(key, 76n))).rejects.toBeInstanceOf(KeyBudgetExceededError);
    // The next day is a new period: the whole budget again.
    expect(await store.openHold(hold(key, 100n, DAY_TWO))).toBe(true);
  });

  it('a key without a budget, or a hold without a period, is not limited', async () => {
    const key = await newKey(1_000n);
    expect(await store.openHold(hold(key, 900n, null))).toBe(true);
    const budgeted = await newKey(1_000n, { limitNanos: 10n, period: 'day' });
    expect(await store.openHold(hold(budgeted, 500n, null))).toBe(true);
  });

  it('a hold whose period kind the key no longer has, or whose key lost its budget, is refused', async () => {
    const key = await newKey(1_000n, { limitNanos: 100n, period: 'day' });
    await expect(store.openHold(hold(key, 1n, { period: 'month', start: new Date('2030-01-01T00:00:00Z') }))).rejects.toBeInstanceOf(KeyBudgetExceededError);
    expect(await store.updateKey(key.id, { budget: null })).toBe(true);
    await expect(store.openHold(hold(key, 1n))).rejects.toBeInstanceOf(KeyBudgetExceededError);
    expect(await store.findKey(key.id)).not.toHaveProperty('budget');
  });

  it('admits exactly 10 of 50 concurrent holds on a key budget that covers 10', async () => {
    const key = await newKey(1_000_000n, { limitNanos: 70n, period: 'week' });
    const week: BudgetWindow = { period: 'week', start: new Date('2029-12-31T00:00:00Z') };
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => store.openHold(hold(key, 7n, week))));
    expect(results.filter((result) => result.status === 'fulfilled' && result.value)).toHaveLength(10);
    const refusals = results.filter((result) => result.status === 'rejected');
    expect(refusals).toHaveLength(40);
    for (const refusal of refusals) expect((refusal as PromiseRejectedResult).reason).toBeInstanceOf(KeyBudgetExceededError);
    expect(await store.findAccount(key.accountId)).toMatchObject({ reservedNanos: 70n });
    expect(await store.keySpend(key.id, week)).toEqual({ spentNanos: 0n, reservedNanos: 70n });
  });

  it('an expired hold settles its checkpoint into the period spend', async () => {
    const key = await newKey(1_000n, { limitNanos: 100n, period: 'day' });
    const crashed = hold(key, 80n, DAY_ONE, new Date(Date.now() - 1_000));
    expect(await store.openHold(crashed)).toBe(true);
    await store.checkpointHolds([
      { holdId: crashed.id, expiresAt: new Date(Date.now() - 1_000), costNanos: 30n, tokens: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 3, reasoningTokens: 0 } },
    ]);
    expect(await store.releaseExpiredHolds(new Date())).toBeGreaterThanOrEqual(1);
    expect(await store.keySpend(key.id, DAY_ONE)).toEqual({ spentNanos: 30n, reservedNanos: 0n });
    expect(await store.findAccount(key.accountId)).toMatchObject({ balanceNanos: 970n, reservedNanos: 0n });
  });

  it('a budget set on a key that has spent counts its charges of the current period', async () => {
    const key = await newKey(1_000n);
    for (const cost of [30n, 12n]) {
      const each = hold(key, 50n, null);
      expect(await store.openHold(each)).toBe(true);
      expect(await store.settleHold(each.id, charge(key, cost))).toBe(true);
    }
    const today: BudgetWindow = { period: 'day', start: new Date(Date.now() - 60_000) };
    expect(await store.updateKey(key.id, { budget: { limitNanos: 50n, period: 'day', current: today } })).toBe(true);
    expect(await store.keySpend(key.id, today)).toEqual({ spentNanos: 42n, reservedNanos: 0n });
    await expect(store.openHold(hold(key, 9n, today))).rejects.toBeInstanceOf(KeyBudgetExceededError);
    expect(await store.openHold(hold(key, 8n, today))).toBe(true);
    // Changing the amount keeps the period's row as it is.
    expect(await store.updateKey(key.id, { budget: { limitNanos: 60n, period: 'day', current: today } })).toBe(true);
    expect(await store.keySpend(key.id, today)).toEqual({ spentNanos: 42n, reservedNanos: 8n });
    // A period starting after the charges counts none of them.
    const later: BudgetWindow = { period: 'total', start: new Date(Date.now() + 60_000) };
    expect(await store.updateKey(key.id, { budget: { limitNanos: 60n, period: 'total', current: later } })).toBe(true);
    expect(await store.keySpend(key.id, later)).toEqual({ spentNanos: 0n, reservedNanos: 0n });
  });

  it('updates, rotates and deletes a key, each bumping the revision; a deleted key changes no more', async () => {
    const key = await newKey(0n);
    const revision = await store.revision();
    expect(await store.updateKey(key.id, { name: 'ci', models: ['a'], requestsPerWindow: 5, tokensPerMinute: null, expiresAt: new Date('2031-01-01T00:00:00Z') })).toBe(true);
    expect(await store.findKey(key.id)).toMatchObject({ name: 'ci', models: ['a'], requestsPerWindow: 5, expiresAt: new Date('2031-01-01T00:00:00Z') });
    const hash = randomBytes(32).toString('hex');
    expect(await store.rotateKey(key.id, { prefix: 'sk-tg-newp', hash })).toBe(true);
    expect(await store.findKeyByHash(key.hash)).toBeUndefined();
    expect((await store.findKeyByHash(hash))?.key).toMatchObject({ id: key.id, prefix: 'sk-tg-newp' });
    expect(await store.deleteKey(key.id)).toBe(true);
    expect((await store.findKey(key.id))?.deletedAt).toBeInstanceOf(Date);
    expect(await store.revision()).toBe(revision + 3);
    expect(await store.deleteKey(key.id)).toBe(false);
    expect(await store.updateKey(key.id, { name: 'again' })).toBe(false);
    expect(await store.rotateKey(key.id, { prefix: 'x', hash: randomBytes(32).toString('hex') })).toBe(false);
    expect(await store.setKeyDisabled(key.id, true)).toBe(false);
    expect(await store.revision()).toBe(revision + 3);
    expect(await store.updateKey('key_missing', {})).toBe(false);
  });

  it('lists keys by page, by account and by status', async () => {
    const first = await newKey(0n);
    const accountId = first.accountId;
    let made = 0;
    const make = async (overrides: Partial<ApiKeyRecord>) => {
      made += 1;
      const key = { ...first, id: unique('key'), hash: randomBytes(32).toString('hex'), createdAt: new Date(first.createdAt.getTime() + made), ...overrides };
      await store.createKey(key);
      return key;
    };
    const disabled = await make({ disabled: true });
    const expired = await make({ expiresAt: new Date(Date.now() - 1_000) });
    const deleted = await make({});
    await store.deleteKey(deleted.id);
    const active = await make({ expiresAt: new Date(Date.now() + 60_000) });
    const now = new Date();
    const ids = async (status?: 'active' | 'disabled' | 'expired' | 'deleted') =>
      (await store.listKeysPage({ accountId, now, ...(status === undefined ? {} : { status }) }, { limit: 50 })).rows.map((key) => key.id);
    expect(await ids()).toEqual([first.id, disabled.id, expired.id, active.id]);
    expect(await ids('active')).toEqual([first.id, active.id]);
    expect(await ids('disabled')).toEqual([disabled.id]);
    expect(await ids('expired')).toEqual([expired.id]);
    expect(await ids('deleted')).toEqual([deleted.id]);
    const page = await store.listKeysPage({ accountId, now }, { limit: 2 });
    expect(page.rows.map((key) => key.id)).toEqual([first.id, disabled.id]);
    const rest = await store.listKeysPage({ accountId, now }, { limit: 2, ...(page.next === undefined ? {} : { after: page.next }) });
    expect(rest.rows.map((key) => key.id)).toEqual([expired.id, active.id]);
    expect(rest.next).toBeUndefined();
  });
});
