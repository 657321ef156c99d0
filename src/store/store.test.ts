/**
 * One suite for the Store contract, run on SQLite (a temp file) always and on PostgreSQL (a fresh
 * database, dropped afterwards) when TOLLGATE_TEST_POSTGRES_URL is set.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyStore } from './kysely-store.js';
import { openStore } from './open-store.js';
import type { ApiKeyRecord, Charge, NewHold, StoredResponse } from './store.js';

const postgresUrl = process.env.TOLLGATE_TEST_POSTGRES_URL;
if (!postgresUrl) console.info('Store suite on PostgreSQL skipped: set TOLLGATE_TEST_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/test) to run it.');

interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

function sqliteDatabase(): Promise<TestDatabase> {
  const folder = mkdtempSync(join(tmpdir(), 'tollgate-store-'));
  return Promise.resolve({ url: `sqlite:${join(folder, 'store.db')}`, drop: async () => rmSync(folder, { recursive: true, force: true }) });
}

/** A fresh database created through the server's `postgres` admin database. */
async function postgresDatabase(): Promise<TestDatabase> {
  if (!postgresUrl) throw new Error('TOLLGATE_TEST_POSTGRES_URL is not set');
  const name = `tg_test_${randomBytes(6).toString('hex')}`;
  const adminUrl = new URL(postgresUrl);
  adminUrl.pathname = '/postgres';
  const admin = async (statement: string): Promise<void> => {
    const client = new pg.Client({ connectionString: adminUrl.toString() });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

const unique = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 12)}`;
const BEYOND_SAFE = 2n ** 53n;

function defineStoreSuite(createDatabase: () => Promise<TestDatabase>): void {
  let database: TestDatabase;
  let store: KyselyStore;
  let clock = new Date('2030-01-01T00:00:00.000Z');

  beforeAll(async () => {
    database = await createDatabase();
    const opened = await openStore(database.url, { now: () => clock });
    if (!(opened instanceof KyselyStore)) throw new Error('openStore did not return a KyselyStore');
    store = opened;
  });

  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  async function newAccount(balance: bigint): Promise<string> {
    const id = unique('acct');
    await store.createAccount({ id, name: `name-${id}`, openingBalanceNanos: balance });
    return id;
  }

  function keyRecord(accountId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
    const id = unique('key');
    return {
      id,
      accountId,
      name: 'laptop',
      prefix: `sk-tg-${id.slice(-6)}`,
      hash: randomBytes(32).toString('hex'),
      models: null,
      requestsPerWindow: null,
      tokensPerMinute: null,
      expiresAt: null,
      disabled: false,
      createdAt: new Date('2030-01-01T00:00:00.123Z'),
      ...overrides,
    };
  }

  async function newKey(accountId: string): Promise<string> {
    const key = keyRecord(accountId);
    await store.createKey(key);
    return key.id;
  }

  function hold(accountId: string, keyId: string, amountNanos: bigint, expiresAt = new Date(clock.getTime() + 60_000)): NewHold {
    return { id: unique('hold'), accountId, keyId, requestId: unique('req'), model: 'gpt-test', amountNanos, expiresAt };
  }

  function charge(keyId: string, costNanos: bigint, model = 'gpt-test', tokens = { inputTokens: 100, cachedInputTokens: 20, outputTokens: 50, reasoningTokens: 10 }): Charge {
    return { requestId: unique('req'), keyId, model, costNanos, excessNanos: 0n, ...tokens };
  }

  async function expectLedgerInvariant(accountId: string): Promise<void> {
    const entries = await store.listLedger(accountId);
    const sum = entries.reduce((total, entry) => total + (entry.kind === 'credit' ? entry.amountNanos : -entry.amountNanos), 0n);
    expect((await store.findAccount(accountId))?.balanceNanos).toBe(sum);
  }

  describe('migrations', () => {
    it('migrate() is idempotent', async () => {
      await store.migrate();
      await store.migrate();
      expect(await store.revision()).toBeGreaterThanOrEqual(0);
    });

    it('two stores migrating a fresh database at once both succeed', async () => {
      const fresh = await createDatabase();
      try {
        const stores = await Promise.all([openStore(fresh.url), openStore(fresh.url), openStore(fresh.url)]);
        const [first, second] = stores;
        await first?.createAccount({ id: 'a1', name: 'one', openingBalanceNanos: 5n });
        expect((await second?.findAccount('one'))?.balanceNanos).toBe(5n);
        expect(await second?.revision()).toBe(1);
        await Promise.all(stores.map((each) => each.close()));
      } finally {
        await fresh.drop();
      }
    });
  });

  describe('accounts', () => {
    it('creates, finds by id or name, lists, and writes the opening balance as a credit', async () => {
      const before = await store.revision();
      const id = unique('acct');
      const created = await store.createAccount({ id, name: `acme-${id}`, openingBalanceNanos: 1_500_000_000n });
      expect(created).toEqual({ id, name: `acme-${id}`, balanceNanos: 1_500_000_000n, reservedNanos: 0n, disabled: false, createdAt: clock, lowBalanceThresholdNanos: null });
      expect(await store.findAccount(id)).toEqual(created);
      expect(await store.findAccount(`acme-${id}`)).toEqual(created);
      expect(await store.findAccount('nobody')).toBeUndefined();
      expect((await store.listAccounts()).map((account) => account.id)).toContain(id);
      const ledger = await store.listLedger(id);
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({ kind: 'credit', amountNanos: 1_500_000_000n, note: 'opening balance', accountId: id });
      expect(await store.revision()).toBe(before + 1);
    });

    it('writes no ledger entry for a zero opening balance', async () => {
      const id = await newAccount(0n);
      expect(await store.listLedger(id)).toEqual([]);
    });

    it('refuses a duplicate name and a negative opening balance', async () => {
      const id = await newAccount(1n);
      await expect(store.createAccount({ id: unique('acct'), name: `name-${id}`, openingBalanceNanos: 0n })).rejects.toThrow();
      await expect(store.createAccount({ id: unique('acct'), name: unique('n'), openingBalanceNanos: -1n })).rejects.toThrow(RangeError);
    });

    it('credits atomically with a ledger entry and a revision bump', async () => {
      const id = await newAccount(10n);
      const before = await store.revision();
      const account = await store.credit(id, 32n, 'top-up');
      expect(account.balanceNanos).toBe(42n);
      expect((await store.listLedger(id)).at(-1)).toMatchObject({ kind: 'credit', amountNanos: 32n, note: 'top-up' });
      expect(await store.revision()).toBe(before + 1);
      await expectLedgerInvariant(id);
    });

    it('refuses credits to unknown accounts and amounts that are not positive, changing nothing', async () => {
      const id = await newAccount(10n);
      await expect(store.credit('no-such-account', 5n, null)).rejects.toThrow(/no account/);
      await expect(store.credit(id, 0n, null)).rejects.toThrow(RangeError);
      await expect(store.credit(id, -5n, null)).rejects.toThrow(RangeError);
      expect((await store.findAccount(id))?.balanceNanos).toBe(10n);
      expect(await store.listLedger(id)).toHaveLength(1);
    });
  });

  describe('keys', () => {
    it('creates, lists, finds by id, prefix and hash (with the account)', async () => {
      const accountId = await newAccount(7n);
      const otherAccountId = await newAccount(0n);
      const before = await store.revision();
      const key = keyRecord(accountId, {
        models: ['gpt-a', 'gpt-b'],
        requestsPerWindow: 30,
        tokensPerMinute: 90_000,
        expiresAt: new Date('2031-05-06T07:08:09.010Z'),
      });
      await store.createKey(key);
      await store.createKey(keyRecord(otherAccountId));
      expect(await store.revision()).toBe(before + 2);
      expect(await store.listKeys(accountId)).toEqual([key]);
      expect((await store.listKeys()).map((each) => each.id)).toContain(key.id);
      expect(await store.findKey(key.id)).toEqual(key);
      expect(await store.findKey(key.prefix)).toEqual(key);
      expect(await store.findKey('sk-tg-nothing')).toBeUndefined();
      const found = await store.findKeyByHash(key.hash);
      expect(found?.key).toEqual(key);
      expect(found?.account).toEqual(await store.findAccount(accountId));
      expect(found?.account.balanceNanos).toBe(7n);
      expect(await store.findKeyByHash('0'.repeat(64))).toBeUndefined();
    });

    it('disables and enables a key, bumping the revision; unknown keys return false', async () => {
      const key = keyRecord(await newAccount(0n));
      await store.createKey(key);
      const before = await store.revision();
      expect(await store.setKeyDisabled(key.id, true)).toBe(true);
      expect((await store.findKeyByHash(key.hash))?.key.disabled).toBe(true);
      expect(await store.setKeyDisabled(key.id, false)).toBe(true);
      expect((await store.findKey(key.id))?.disabled).toBe(false);
      expect(await store.revision()).toBe(before + 2);
      expect(await store.setKeyDisabled('no-such-key', true)).toBe(false);
      expect(await store.revision()).toBe(before + 2);
    });

    it('refuses a key for an unknown account, a duplicate hash and bad limits', async () => {
      const accountId = await newAccount(0n);
      await expect(store.createKey(keyRecord('no-such-account'))).rejects.toThrow(/no account/);
      const key = keyRecord(accountId);
      await store.createKey(key);
      await expect(store.createKey(keyRecord(accountId, { hash: key.hash }))).rejects.toThrow();
      await expect(store.createKey(keyRecord(accountId, { requestsPerWindow: 1.5 }))).rejects.toThrow(RangeError);
      expect(await store.listKeys(accountId)).toHaveLength(1);
    });
  });

  describe('holds', () => {
    it('opens a hold, settles it exactly once, and bills the charge', async () => {
      const accountId = await newAccount(1_000n);
      const keyId = await newKey(accountId);
      const newHold = hold(accountId, keyId, 400n);
      expect(await store.openHold(newHold)).toBe(true);
      expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 1_000n, reservedNanos: 400n });
      expect(await store.countOpenHolds(accountId)).toBe(1);

      const billed = charge(keyId, 123n);
      expect(await store.settleHold(newHold.id, billed)).toBe(true);
      expect(await store.settleHold(newHold.id, billed)).toBe(false);
      expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 877n, reservedNanos: 0n });
      expect(await store.countOpenHolds(accountId)).toBe(0);
      const charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
      expect(charges).toHaveLength(1);
      expect(charges[0]).toMatchObject({
        amountNanos: 123n,
        requestId: billed.requestId,
        keyId,
        model: 'gpt-test',
        inputTokens: 100,
        cachedInputTokens: 20,
        outputTokens: 50,
        reasoningTokens: 10,
        createdAt: clock,
      });
      await expectLedgerInvariant(accountId);
    });

    it('refuses a hold the spendable balance cannot cover, changing nothing', async () => {
      const accountId = await newAccount(100n);
      const keyId = await newKey(accountId);
      expect(await store.openHold(hold(accountId, keyId, 101n))).toBe(false);
      expect(await store.openHold(hold(accountId, keyId, 60n))).toBe(true);
      // 40 left to spend once 60 is reserved.
      expect(await store.openHold(hold(accountId, keyId, 41n))).toBe(false);
      expect(await store.openHold(hold(accountId, keyId, 40n))).toBe(true);
      expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 100n, reservedNanos: 100n });
      expect(await store.countOpenHolds(accountId)).toBe(2);
      expect(await store.openHold(hold('no-such-account', keyId, 1n))).toBe(false);
    });

    it('refuses holds on a disabled account', async () => {
      const accountId = await newAccount(100n);
      const keyId = await newKey(accountId);
      expect(await store.setAccountDisabled(accountId, true)).toBe(true);
      expect(await store.openHold(hold(accountId, keyId, 1n))).toBe(false);
      expect(await store.setAccountDisabled(accountId, false)).toBe(true);
      expect(await store.openHold(hold(accountId, keyId, 1n))).toBe(true);
      expect(await store.setAccountDisabled('no-such-account', true)).toBe(false);
    });

    it('releases only the reservation for a null, an empty or a free-but-counted charge', async () => {
      const accountId = await newAccount(1_000n);
      const keyId = await newKey(accountId);
      const first = hold(accountId, keyId, 10n);
      const second = hold(accountId, keyId, 10n);
      const third = hold(accountId, keyId, 10n);
      for (const each of [first, second, third]) expect(await store.openHold(each)).toBe(true);
      expect(await store.settleHold(first.id, null)).toBe(true);
      expect(await store.settleHold(second.id, charge(keyId, 0n, 'gpt-test', { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 }))).toBe(true);
      expect(await store.listLedger(accountId)).toHaveLength(1);
      // Tokens without a cost (a free model) are still recorded, at zero.
      expect(await store.settleHold(third.id, charge(keyId, 0n))).toBe(true);
      expect((await store.listLedger(accountId)).at(-1)).toMatchObject({ kind: 'charge', amountNanos: 0n, inputTokens: 100 });
      expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 1_000n, reservedNanos: 0n });
    });

    it('refuses a negative cost or token count without settling the hold', async () => {
      const accountId = await newAccount(100n);
      const keyId = await newKey(accountId);
      const newHold = hold(accountId, keyId, 10n);
      await store.openHold(newHold);
      await expect(store.settleHold(newHold.id, charge(keyId, -1n))).rejects.toThrow(RangeError);
      await expect(store.settleHold(newHold.id, { ...charge(keyId, 1n), outputTokens: -3 })).rejects.toThrow(RangeError);
      await expect(store.openHold(hold(accountId, keyId, -1n))).rejects.toThrow(RangeError);
      expect(await store.countOpenHolds(accountId)).toBe(1);
      expect(await store.settleHold(newHold.id, charge(keyId, 1n))).toBe(true);
    });

    it('admits exactly 10 of 50 concurrent holds on a balance that covers 10', async () => {
      const accountId = await newAccount(10n * 7n);
      const keyId = await newKey(accountId);
      const results = await Promise.all(Array.from({ length: 50 }, () => store.openHold(hold(accountId, keyId, 7n))));
      expect(results.filter(Boolean)).toHaveLength(10);
      expect(await store.countOpenHolds(accountId)).toBe(10);
      expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 70n, reservedNanos: 70n });
    });

    it('releases expired holds once; a settle after the release returns false', async () => {
      const accountId = await newAccount(1_000n);
      const keyId = await newKey(accountId);
      const expired = hold(accountId, keyId, 100n, new Date(clock.getTime() - 1));
      const atCutoff = hold(accountId, keyId, 50n, clock);
      const live = hold(accountId, keyId, 30n, new Date(clock.getTime() + 60_000));
      for (const each of [expired, atCutoff, live]) expect(await store.openHold(each)).toBe(true);
      expect(await store.countOpenHolds(accountId)).toBe(3);

      const released = await store.releaseExpiredHolds(clock);
      expect(released).toBeGreaterThanOrEqual(2); // other tests' holds may expire too
      expect(await store.countOpenHolds(accountId)).toBe(1);
      expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 1_000n, reservedNanos: 30n });
      expect(await store.settleHold(expired.id, charge(keyId, 99n))).toBe(false);
      expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 1_000n, reservedNanos: 30n });
      expect(await store.releaseExpiredHolds(clock)).toBe(0);
      expect(await store.settleHold(live.id, null)).toBe(true);
    });

    it('settles or releases each hold exactly once when a sweep races the settles', async () => {
      const accountId = await newAccount(10_000n);
      const keyId = await newKey(accountId);
      const holds = Array.from({ length: 20 }, () => hold(accountId, keyId, 100n, new Date(clock.getTime() - 1_000)));
      for (const each of holds) await store.openHold(each);
      const [settles, released] = await Promise.all([
        Promise.all(holds.map((each) => store.settleHold(each.id, charge(keyId, 1n)))),
        store.releaseExpiredHolds(clock),
      ]);
      const settled = settles.filter(Boolean).length;
      expect(settled + released).toBe(20);
      expect(await store.findAccount(accountId)).toMatchObject({ reservedNanos: 0n, balanceNanos: 10_000n - BigInt(settled) });
      expect((await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge')).toHaveLength(settled);
      await expectLedgerInvariant(accountId);
    });
  });

  describe('stored responses', () => {
    function storedResponse(accountId: string, overrides: Partial<StoredResponse> = {}): StoredResponse {
      const id = unique('resp');
      return {
        id,
        accountId,
        response: { id, object: 'response', status: 'completed', output: [{ id: 'msg_1', type: 'message', content: [{ type: 'output_text', text: 'héllo "quoted" ✓' }] }], usage: null },
        inputItems: [
          { id: 'msg_0', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
          { id: 'fc_0', type: 'function_call', call_id: 'call_0', name: 'f', arguments: '{}', status: 'completed' },
        ],
        createdAt: new Date('2030-01-02T03:04:05.678Z'),
        ...overrides,
      };
    }

    it('saves and finds a response, JSON and date intact', async () => {
      const accountId = await newAccount(0n);
      const stored = storedResponse(accountId);
      await store.saveResponse(stored);
      expect(await store.findResponse(stored.id, accountId)).toEqual(stored);
      expect(await store.findResponse('resp_unknown', accountId)).toBeUndefined();
    });

    it("hides another account's response from find and delete", async () => {
      const owner = await newAccount(0n);
      const stranger = await newAccount(0n);
      const stored = storedResponse(owner);
      await store.saveResponse(stored);
      expect(await store.findResponse(stored.id, stranger)).toBeUndefined();
      expect(await store.deleteResponse(stored.id, stranger)).toBe(false);
      expect(await store.findResponse(stored.id, owner)).toEqual(stored);
    });

    it('replaces a response saved again under the same id, but never across accounts', async () => {
      const owner = await newAccount(0n);
      const stranger = await newAccount(0n);
      const first = storedResponse(owner);
      await store.saveResponse(first);
      const second = { ...first, response: { ...first.response, status: 'failed' }, inputItems: [] };
      await store.saveResponse(second);
      expect(await store.findResponse(first.id, owner)).toEqual(second);
      await expect(store.saveResponse({ ...first, accountId: stranger })).rejects.toThrow(/another account/);
      expect(await store.findResponse(first.id, owner)).toEqual(second);
      expect(await store.findResponse(first.id, stranger)).toBeUndefined();
    });

    it('deletes once; a deleted response is gone', async () => {
      const accountId = await newAccount(0n);
      const stored = storedResponse(accountId);
      await store.saveResponse(stored);
      expect(await store.deleteResponse(stored.id, accountId)).toBe(true);
      expect(await store.findResponse(stored.id, accountId)).toBeUndefined();
      expect(await store.deleteResponse(stored.id, accountId)).toBe(false);
    });

    it('refuses a response for an unknown account and values that are not JSON objects', async () => {
      const accountId = await newAccount(0n);
      await expect(store.saveResponse(storedResponse('no-such-account'))).rejects.toThrow();
      const notObject = storedResponse(accountId, { response: [] as unknown as Record<string, unknown> });
      await expect(store.saveResponse(notObject)).rejects.toThrow(TypeError);
      const badItems = storedResponse(accountId, { inputItems: ['text'] as unknown as Array<Record<string, unknown>> });
      await expect(store.saveResponse(badItems)).rejects.toThrow(TypeError);
      await expect(store.saveResponse(storedResponse(accountId, { createdAt: new Date(Number.NaN) }))).rejects.toThrow(RangeError);
    });
  });

  describe('instances', () => {
    it('records heartbeats, refreshes them, lists the live ones and removes', async () => {
      const early = unique('inst');
      const late = unique('inst');
      const seen = new Date('2031-05-01T00:00:00.000Z');
      await store.heartbeat({ id: early, sharedLimits: false, lastSeenAt: new Date(seen.getTime() - 60_000) });
      await store.heartbeat({ id: late, sharedLimits: true, lastSeenAt: seen });
      const mine = (instances: Array<{ id: string }>) => instances.filter((instance) => instance.id === early || instance.id === late);

      expect(mine(await store.liveInstances(new Date(seen.getTime() - 30_000)))).toEqual([{ id: late, sharedLimits: true, lastSeenAt: seen }]);
      // The cutoff is inclusive.
      expect(mine(await store.liveInstances(new Date(seen.getTime() - 60_000))).map((instance) => instance.id).sort()).toEqual([early, late].sort());

      const refreshed = new Date(seen.getTime() + 5_000);
      await store.heartbeat({ id: early, sharedLimits: true, lastSeenAt: refreshed });
      const live = mine(await store.liveInstances(seen));
      expect(live).toHaveLength(2);
      expect(live.find((instance) => instance.id === early)).toEqual({ id: early, sharedLimits: true, lastSeenAt: refreshed });

      await store.removeInstance(early);
      await store.removeInstance('never-registered');
      expect(mine(await store.liveInstances(seen))).toEqual([{ id: late, sharedLimits: true, lastSeenAt: seen }]);
    });
  });

  describe('ledger and usage', () => {
    it('keeps balance equal to credits minus charges', async () => {
      const accountId = await newAccount(5_000n);
      const keyId = await newKey(accountId);
      await store.credit(accountId, 2_500n, null);
      for (const cost of [100n, 250n, 1n]) {
        const each = hold(accountId, keyId, 300n);
        await store.openHold(each);
        await store.settleHold(each.id, charge(keyId, cost));
      }
      expect((await store.findAccount(accountId))?.balanceNanos).toBe(5_000n + 2_500n - 351n);
      await expectLedgerInvariant(accountId);
    });

    it('groups charges by model, filtered by account and since', async () => {
      const accountId = await newAccount(1_000_000n);
      const otherAccountId = await newAccount(1_000_000n);
      const keyId = await newKey(accountId);
      const otherKeyId = await newKey(otherAccountId);
      const tokens = { inputTokens: 10, cachedInputTokens: 2, cacheWriteInputTokens: 3, outputTokens: 5, reasoningTokens: 1 };
      const bill = async (account: string, key: string, model: string, cost: bigint): Promise<void> => {
        const each = hold(account, key, 1_000n);
        await store.openHold(each);
        await store.settleHold(each.id, charge(key, cost, model, tokens));
      };
      const start = clock;
      await bill(accountId, keyId, 'model-b', 10n);
      await bill(accountId, keyId, 'model-a', 20n);
      clock = new Date(start.getTime() + 3_600_000);
      await bill(accountId, keyId, 'model-a', 30n);
      await bill(otherAccountId, otherKeyId, 'model-a', 99n);

      expect(await store.usageReport({ accountId })).toEqual([
        { model: 'model-a', requests: 2, inputTokens: 20, cachedInputTokens: 4, cacheWriteInputTokens: 6, outputTokens: 10, reasoningTokens: 2, costNanos: 50n, excessNanos: 0n },
        { model: 'model-b', requests: 1, inputTokens: 10, cachedInputTokens: 2, cacheWriteInputTokens: 3, outputTokens: 5, reasoningTokens: 1, costNanos: 10n, excessNanos: 0n },
      ]);
      expect(await store.usageReport({ accountId, since: clock })).toEqual([
        { model: 'model-a', requests: 1, inputTokens: 10, cachedInputTokens: 2, cacheWriteInputTokens: 3, outputTokens: 5, reasoningTokens: 1, costNanos: 30n, excessNanos: 0n },
      ]);
      const everyone = await store.usageReport({ since: clock });
      expect(everyone.find((row) => row.model === 'model-a')).toMatchObject({ requests: 2, costNanos: 129n });
      expect(await store.usageReport({ accountId, since: new Date(clock.getTime() + 1) })).toEqual([]);
    });

    it('round-trips 64-bit amounts above 2^53 exactly', async () => {
      const opening = 2n ** 62n + 1n;
      const accountId = await newAccount(opening);
      const keyId = await newKey(accountId);
      expect((await store.findAccount(accountId))?.balanceNanos).toBe(opening);
      expect((await store.credit(accountId, BEYOND_SAFE + 1n, null)).balanceNanos).toBe(opening + BEYOND_SAFE + 1n);
      const big = hold(accountId, keyId, BEYOND_SAFE + 3n);
      expect(await store.openHold(big)).toBe(true);
      expect((await store.findAccount(accountId))?.reservedNanos).toBe(BEYOND_SAFE + 3n);
      expect(await store.settleHold(big.id, charge(keyId, BEYOND_SAFE + 5n, 'model-big'))).toBe(true);
      const account = await store.findAccount(accountId);
      expect(account).toMatchObject({ reservedNanos: 0n, balanceNanos: opening + BEYOND_SAFE + 1n - (BEYOND_SAFE + 5n) });
      expect((await store.listLedger(accountId)).map((entry) => entry.amountNanos)).toEqual([opening, BEYOND_SAFE + 1n, BEYOND_SAFE + 5n]);
      expect((await store.usageReport({ accountId }))[0]?.costNanos).toBe(BEYOND_SAFE + 5n);
      await expectLedgerInvariant(accountId);
    });
  });
}

describe('store on SQLite', () => defineStoreSuite(sqliteDatabase));

describe.skipIf(!postgresUrl)('store on PostgreSQL', () => defineStoreSuite(postgresDatabase));
