/**
 * The SQLite hold batch's two ways (sqlite-hold-statements.ts), watched statement by statement: a
 * batch runs without a savepoint when every operation ends as expected, refusals included (each
 * keeps its own outcome and a refused one leaves no trace), and an operation that fails
 * unexpectedly sends the batch round again with a savepoint each, so that only it fails.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/databases.js';
import { openOperation, settleOperation } from '../hold-operations.js';
import { openStore } from '../open-store.js';
import { responseRow } from '../queries/response-queries.js';
import type { Database } from '../schema.js';
import { createSqliteHoldBatchCommit, type SaveResponseOperation, type SqliteBatchCommit } from './sqlite-hold-statements.js';
import { KeyBudgetExceededError, type ApiKeyRecord, type BudgetWindow, type Charge, type KeyBudget, type NewHold, type Store, type StoredResponse } from '../store.js';

const unique = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 12)}`;
const DAY: BudgetWindow = { period: 'day', start: new Date('2030-01-01T00:00:00Z') };
const NOW = new Date();

describe('the SQLite hold batch', () => {
  let database: TestDatabase;
  /** Sets up accounts and keys, and reads what the batches left, on its own connection. */
  let store: Store;
  let connection: BetterSqlite3.Database;
  let db: Kysely<Database>;
  let commit: SqliteBatchCommit;
  /** Every statement the batch's connection ran, in order. */
  let statements: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    store = await openStore(database.url);
    connection = new BetterSqlite3(database.url.slice('sqlite:'.length), { verbose: (statement) => statements.push(String(statement)) });
    connection.pragma('foreign_keys = ON');
    connection.defaultSafeIntegers(true);
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
    commit = createSqliteHoldBatchCommit(db, connection);
  });

  beforeEach(() => {
    statements = [];
  });

  afterAll(async () => {
    await db?.destroy();
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

  const hold = (key: ApiKeyRecord, amountNanos: bigint, budgeted = key.budget !== undefined): NewHold => ({
    id: unique('hold'),
    accountId: key.accountId,
    keyId: key.id,
    requestId: unique('req'),
    model: 'gpt-test',
    amountNanos,
    expiresAt: new Date(Date.now() + 60_000),
    ...(budgeted ? { keyBudget: DAY } : {}),
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

  const stored = (accountId: string): StoredResponse => {
    const id = unique('resp');
    return { id, accountId, response: { id, object: 'response', output: [] }, inputItems: [{ type: 'message', role: 'user', content: 'hi' }], createdAt: NOW };
  };
  const save = (response: StoredResponse): SaveResponseOperation => ({ kind: 'save-response', row: responseRow(response) });

  const savepoints = () => statements.filter((statement) => /^SAVEPOINT/i.test(statement)).length;
  const transactions = () => statements.filter((statement) => /^BEGIN/i.test(statement)).length;

  it('decides a balance refusal, a key budget refusal and an open in one transaction without a savepoint, and the refused leave no trace', async () => {
    const poor = await newKey(10n);
    const budgeted = await newKey(1_000n, { limitNanos: 100n, period: 'day' });
    const plain = await newKey(1_000n);
    // The budgeted key has 60 of its 100 reserved already.
    expect(await store.openHold(hold(budgeted, 60n))).toBe(true);
    const before = { poor: await store.findAccount(poor.accountId), budgeted: await store.findAccount(budgeted.accountId) };

    const refusedByBalance = hold(poor, 11n);
    const refusedByBudget = hold(budgeted, 41n);
    const opened = hold(plain, 500n);
    const fitsAfterwards = hold(budgeted, 40n);
    const outcomes = await commit([refusedByBalance, refusedByBudget, opened, fitsAfterwards].map((each) => openOperation(each, NOW)));

    expect(outcomes[0]).toEqual({ ok: true, value: false });
    expect(outcomes[1]).toMatchObject({ ok: false, error: expect.any(KeyBudgetExceededError) });
    expect((outcomes[1] as { error: KeyBudgetExceededError }).error.keyId).toBe(budgeted.id);
    expect(outcomes[2]).toEqual({ ok: true, value: true });
    // The refusal took back its reservation before the next operation looked at the balance.
    expect(outcomes[3]).toEqual({ ok: true, value: true });
    expect(transactions()).toBe(1);
    expect(savepoints()).toBe(0);
    expect(statements.at(-1)).toMatch(/^COMMIT/i);

    expect(await store.findAccount(poor.accountId)).toEqual(before.poor);
    expect(await store.countOpenHolds(poor.accountId)).toBe(0);
    expect(await store.findAccount(budgeted.accountId)).toMatchObject({ balanceNanos: 1_000n, reservedNanos: (before.budgeted?.reservedNanos ?? 0n) + 40n });
    expect(await store.countOpenHolds(budgeted.accountId)).toBe(2);
    expect(await store.keySpend(budgeted.id, DAY)).toEqual({ spentNanos: 0n, reservedNanos: 100n });
    expect(await store.findAccount(plain.accountId)).toMatchObject({ balanceNanos: 1_000n, reservedNanos: 500n });
    // The refused holds were never written: settling them finds nothing.
    for (const refused of [refusedByBalance, refusedByBudget]) expect(await store.settleHold(refused.id, null)).toBe(false);
  });

  it('a key budget refused on a period with no row yet leaves no row and no reservation', async () => {
    const key = await newKey(1_000n, { limitNanos: 100n, period: 'day' });
    const outcomes = await commit([openOperation(hold(key, 101n), NOW)]);
    expect(outcomes[0]).toMatchObject({ ok: false, error: expect.any(KeyBudgetExceededError) });
    expect(savepoints()).toBe(0);
    expect(await store.findAccount(key.accountId)).toMatchObject({ balanceNanos: 1_000n, reservedNanos: 0n });
    expect(connection.prepare('SELECT count(*) AS n FROM key_spend WHERE key_id = ?').get(key.id)).toEqual({ n: 0n });
  });

  it('settles and refuses a second settle of the same hold in one transaction without a savepoint', async () => {
    const key = await newKey(1_000n);
    const opened = hold(key, 100n);
    expect(await store.openHold(opened)).toBe(true);
    const outcomes = await commit([settleOperation(opened.id, charge(key.id, 30n), NOW), settleOperation(opened.id, charge(key.id, 30n), NOW)]);
    expect(outcomes).toEqual([
      { ok: true, value: true },
      { ok: true, value: false },
    ]);
    expect(savepoints()).toBe(0);
    expect(await store.findAccount(key.accountId)).toMatchObject({ balanceNanos: 970n, reservedNanos: 0n });
    expect((await store.listLedger(key.accountId)).filter((entry) => entry.kind === 'charge')).toHaveLength(1);
  });

  it('redoes a batch with a savepoint per operation when one throws, so that only it fails and the others commit', async () => {
    const key = await newKey(1_000n, { limitNanos: 500n, period: 'day' });
    const poor = await newKey(5n);
    const settles = hold(key, 100n);
    expect(await store.openHold(settles)).toBe(true);
    const first = hold(key, 200n);
    // No such key: the hold's insert breaks a foreign key after the balance was reserved.
    const broken = { ...hold(key, 150n, false), keyId: 'no-such-key' };
    const last = hold(key, 200n);
    const refusedByBudget = hold(key, 1n);
    const operations = [
      openOperation(first, NOW),
      openOperation(broken, NOW),
      settleOperation(settles.id, charge(key.id, 60n), NOW),
      openOperation(hold(poor, 6n), NOW),
      openOperation(last, NOW),
      // 100 settled as 60, 200 and 200 held: 460 of 500, so one more nano over 40 is refused.
      openOperation({ ...refusedByBudget, amountNanos: 41n }, NOW),
    ];
    const outcomes = await commit(operations);

    expect(outcomes[0]).toEqual({ ok: true, value: true });
    expect(outcomes[1]).toMatchObject({ ok: false, error: { message: expect.stringMatching(/foreign key/i) } });
    expect(outcomes[2]).toEqual({ ok: true, value: true });
    expect(outcomes[3]).toEqual({ ok: true, value: false });
    expect(outcomes[4]).toEqual({ ok: true, value: true });
    expect(outcomes[5]).toMatchObject({ ok: false, error: expect.any(KeyBudgetExceededError) });
    // The plain run, rolled back, then the run with a savepoint per operation, committed.
    expect(transactions()).toBe(2);
    expect(statements.filter((statement) => /^ROLLBACK$/i.test(statement))).toHaveLength(1);
    expect(savepoints()).toBe(operations.length);
    expect(statements.at(-1)).toMatch(/^COMMIT/i);

    expect(await store.findAccount(key.accountId)).toMatchObject({ balanceNanos: 940n, reservedNanos: 400n });
    expect(await store.keySpend(key.id, DAY)).toEqual({ spentNanos: 60n, reservedNanos: 400n });
    expect(await store.countOpenHolds(key.accountId)).toBe(2);
    expect(await store.findAccount(poor.accountId)).toMatchObject({ balanceNanos: 5n, reservedNanos: 0n });
  });

  it("saves stored responses in the hold batch: one saved, another account's id refused without a trace, one that breaks a foreign key alone", async () => {
    const key = await newKey(1_000n);
    const stranger = await newKey(0n);
    const owned = stored(stranger.accountId);
    expect(await commit([save(owned)])).toEqual([{ ok: true, value: true }]);
    const saved = stored(key.accountId);
    const opened = hold(key, 100n);

    statements = [];
    const together = await commit([save(saved), openOperation(opened, NOW), save({ ...owned, accountId: key.accountId, response: { id: owned.id, object: 'response', output: [1] } })]);
    expect(together[0]).toEqual({ ok: true, value: true });
    expect(together[1]).toEqual({ ok: true, value: true });
    expect(together[2]).toMatchObject({ ok: false, error: { message: expect.stringMatching(/another account/) } });
    expect(transactions()).toBe(1);
    expect(savepoints()).toBe(0);
    expect(await store.findResponse(saved.id, key.accountId)).toEqual(saved);
    expect(await store.findResponse(owned.id, stranger.accountId)).toEqual(owned);
    expect(await store.findResponse(owned.id, key.accountId)).toBeUndefined();

    statements = [];
    const orphan = stored('no-such-account');
    const settledWith = await commit([save(orphan), settleOperation(opened.id, charge(key.id, 10n), NOW)]);
    expect(settledWith[0]).toMatchObject({ ok: false, error: { message: expect.stringMatching(/foreign key/i) } });
    expect(settledWith[1]).toEqual({ ok: true, value: true });
    expect(savepoints()).toBe(2);
    expect(await store.findAccount(key.accountId)).toMatchObject({ balanceNanos: 990n, reservedNanos: 0n });
  });

  it('through the store, saves go with the hold batches and are not counted as hold operations', async () => {
    const key = await newKey(1_000n);
    const commits: number[] = [];
    const counted = await openStore(database.url, { onHoldCommit: (operations) => commits.push(operations) });
    try {
      const response = stored(key.accountId);
      const [opened] = await Promise.all([counted.openHold(hold(key, 10n)), counted.saveResponse(response)]);
      expect(opened).toBe(true);
      expect(commits).toEqual([1]);
      await counted.saveResponse(stored(key.accountId));
      expect(commits).toEqual([1]);
      expect(await counted.findResponse(response.id, key.accountId)).toEqual(response);
    } finally {
      await counted.close();
    }
  });

  it('fails the whole batch, without a second run, when the transaction cannot begin', async () => {
    const key = await newKey(1_000n);
    const locker = new BetterSqlite3(database.url.slice('sqlite:'.length));
    locker.pragma('busy_timeout = 0');
    connection.pragma('busy_timeout = 0');
    locker.exec('BEGIN IMMEDIATE');
    try {
      statements = [];
      await expect(commit([openOperation(hold(key, 1n), NOW)])).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
      expect(transactions()).toBe(1);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expect(await commit([openOperation(hold(key, 1n), NOW)])).toEqual([{ ok: true, value: true }]);
  });
});
