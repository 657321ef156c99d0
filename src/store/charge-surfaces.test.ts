/**
 * The endpoint of a charge (migration 0012), on SQLite always and on PostgreSQL when
 * TOLLGATE_TEST_POSTGRES_URL is set: a hold is opened with its surface, and every way it is settled
 * writes that surface on its ledger rows, taken from the hold: a settle alone, settles and opens
 * batched together (PostgreSQL's set-based function), a settle in the batch that opened its hold
 * and a batch with a checkpoint (PostgreSQL's operation-by-operation function), a batch run again
 * one operation at a time after one failed, and the expiry sweep. A hold opened without one (as
 * every hold before the migration) bills a charge without one, which usage by endpoint calls
 * `unknown`; the request log's errors are counted under their route's surface.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../test/support/databases.js';
import { newAccountWithKey, openTestStore, type TestStore } from '../../test/support/test-store.js';
import type { Charge, NewHold, RequestLogEntry, Store } from './store.js';

const unique = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 12)}`;
const HOUR = 3_600_000;

describe.each(engines)('charge surfaces on %s', (engine) => {
  let opened: TestStore;
  let store: Store;
  let commits: number[];
  let clock = new Date('2031-03-01T00:00:00.000Z');

  beforeAll(async () => {
    commits = [];
    opened = await openTestStore(engine, { now: () => clock, onHoldCommit: (operations) => commits.push(operations) });
    ({ store } = opened);
  });

  afterAll(() => opened?.close());

  const newAccount = () => newAccountWithKey(store, 1_000_000n, clock);

  const hold = (accountId: string, keyId: string, surface: string | undefined, amountNanos = 1_000n): NewHold => ({
    id: unique('hold'),
    accountId,
    keyId,
    requestId: unique('req'),
    model: 'gpt-test',
    amountNanos,
    expiresAt: new Date(clock.getTime() + HOUR),
    ...(surface === undefined ? {} : { surface }),
  });

  const charge = (keyId: string, costNanos: bigint, excessNanos = 0n): Charge => ({
    requestId: unique('req'),
    keyId,
    model: 'gpt-test',
    costNanos,
    excessNanos,
    inputTokens: 10,
    cachedInputTokens: 0,
    outputTokens: 5,
    reasoningTokens: 0,
  });

  /** The ledger's charges and excesses of the account: kind, amount and surface, in order. */
  async function billed(accountId: string): Promise<Array<[string, bigint, string | null]>> {
    return (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge' || entry.kind === 'excess').map((entry) => [entry.kind, entry.amountNanos, entry.surface]);
  }

  it("writes the hold's surface on a settled charge and its excess, never on a credit", async () => {
    const { accountId, keyId } = await newAccount();
    const opened = hold(accountId, keyId, 'embeddings');
    expect(await store.openHold(opened)).toBe(true);
    expect(await store.settleHold(opened.id, charge(keyId, 700n, 40n))).toBe(true);
    expect(await billed(accountId)).toEqual([
      ['charge', 700n, 'embeddings'],
      ['excess', 40n, 'embeddings'],
    ]);
    const [credit] = await store.listLedger(accountId);
    expect(credit).toMatchObject({ kind: 'credit', surface: null });
  });

  it('writes each hold its own surface when opens and settles are committed together', async () => {
    const { accountId, keyId } = await newAccount();
    const surfaces = ['responses', 'chat-completions', 'anthropic-messages', 'embeddings'];
    const holds = surfaces.map((surface) => hold(accountId, keyId, surface));
    commits.length = 0;
    expect(await Promise.all(holds.map((each) => store.openHold(each)))).toEqual([true, true, true, true]);
    // Settled in reverse order, with one excess: each charge follows its hold, not its place in the batch.
    const settled = await Promise.all([...holds].reverse().map((each, index) => store.settleHold(each.id, charge(keyId, BigInt(100 + index), index === 1 ? 3n : 0n))));
    expect(settled).toEqual([true, true, true, true]);
    expect(commits).toEqual([4, 4]);
    expect(await billed(accountId)).toEqual([
      ['charge', 100n, 'embeddings'],
      ['charge', 101n, 'anthropic-messages'],
      ['excess', 3n, 'anthropic-messages'],
      ['charge', 102n, 'chat-completions'],
      ['charge', 103n, 'responses'],
    ]);
  });

  it('writes it when the hold is settled in the batch that opened it, and beside a checkpoint', async () => {
    const { accountId, keyId } = await newAccount();
    const running = hold(accountId, keyId, 'chat-completions');
    expect(await store.openHold(running)).toBe(true);
    const quick = hold(accountId, keyId, 'responses');
    const checkpointed = hold(accountId, keyId, 'anthropic-messages');
    commits.length = 0;
    // Queued in one turn: one batch, in which a hold is opened and settled, and another checkpointed.
    const outcomes = await Promise.all([
      store.openHold(quick),
      store.openHold(checkpointed),
      store.settleHold(quick.id, charge(keyId, 11n)),
      store.checkpointHolds([{ holdId: checkpointed.id, expiresAt: new Date(clock.getTime() + HOUR), costNanos: 5n, tokens: { inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0 } }]),
      store.settleHold(running.id, charge(keyId, 22n)),
    ]);
    expect(commits).toEqual([5]);
    expect(outcomes).toEqual([true, true, true, undefined, true]);
    expect(await store.settleHold(checkpointed.id, charge(keyId, 33n))).toBe(true);
    expect(await billed(accountId)).toEqual([
      ['charge', 11n, 'responses'],
      ['charge', 22n, 'chat-completions'],
      ['charge', 33n, 'anthropic-messages'],
    ]);
  });

  it('writes it when a batch is run again one operation at a time because one of them failed', async () => {
    const { accountId, keyId } = await newAccount();
    const first = hold(accountId, keyId, 'embeddings');
    const second = hold(accountId, keyId, 'responses');
    for (const each of [first, second]) expect(await store.openHold(each)).toBe(true);
    commits.length = 0;
    const outcomes = await Promise.allSettled([
      store.settleHold(first.id, charge(keyId, 12n, 2n)),
      // No such key: this charge breaks a foreign key, and fails alone.
      store.openHold(hold(accountId, 'no-such-key', 'chat-completions')),
      store.settleHold(second.id, charge(keyId, 13n)),
    ]);
    expect(commits).toEqual([3]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await billed(accountId)).toEqual([
      ['charge', 12n, 'embeddings'],
      ['excess', 2n, 'embeddings'],
      ['charge', 13n, 'responses'],
    ]);
  });

  it('writes it on the charge an expired hold settles from its last checkpoint', async () => {
    const { accountId, keyId } = await newAccount();
    const crashed = hold(accountId, keyId, 'anthropic-messages');
    expect(await store.openHold(crashed)).toBe(true);
    await store.checkpointHolds([{ holdId: crashed.id, expiresAt: new Date(clock.getTime() + 1_000), costNanos: 77n, tokens: { inputTokens: 7, cachedInputTokens: 0, outputTokens: 7, reasoningTokens: 0 } }]);
    expect(await store.releaseExpiredHolds(new Date(clock.getTime() + 2_000))).toBeGreaterThanOrEqual(1);
    expect(await billed(accountId)).toEqual([['charge', 77n, 'anthropic-messages']]);
  });

  it("leaves the surface null for a hold opened without one; usage by endpoint calls it unknown, and counts the request log's errors by route", async () => {
    clock = new Date('2031-04-01T00:00:00.000Z');
    const { accountId, keyId } = await newAccount();
    const bill = async (surface: string | undefined, costNanos: bigint, excessNanos = 0n) => {
      const opened = hold(accountId, keyId, surface);
      expect(await store.openHold(opened)).toBe(true);
      expect(await store.settleHold(opened.id, charge(keyId, costNanos, excessNanos))).toBe(true);
    };
    await bill(undefined, 1n);
    await bill('embeddings', 20n, 5n);
    await bill('embeddings', 30n);
    await bill('chat-completions', 400n);
    expect((await billed(accountId)).map(([, , surface]) => surface)).toEqual([null, 'embeddings', 'embeddings', 'embeddings', 'chat-completions']);

    const logged = (surface: string | null, errorCode: string | null): RequestLogEntry => ({
      at: clock,
      requestId: unique('req'),
      accountId,
      keyId,
      surface,
      model: 'gpt-test',
      target: null,
      status: errorCode === null ? 200 : 400,
      errorCode,
      stream: false,
      latencyMs: 1,
      firstByteMs: null,
      inputTokens: 0,
      cachedInputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      costNanos: 0n,
      requestBody: null,
      responseBody: null,
    });
    await store.appendRequestLog([logged('embeddings', 'invalid_value'), logged('embeddings', null), logged('responses', 'upstream_error'), logged(null, 'not_found')]);

    const range = { accountId, from: clock, to: new Date(clock.getTime() + HOUR) };
    expect((await store.usageBy('endpoint', range)).map((row) => [row.group, row.requests, row.costNanos, row.excessNanos, row.inputTokens])).toEqual([
      ['chat-completions', 1, 400n, 0n, 10],
      ['embeddings', 2, 50n, 5n, 20],
      ['unknown', 1, 1n, 0n, 10],
    ]);
    // A request to no endpoint (an unknown route's 404) has none: the group '', as for no key or model.
    expect(await store.requestErrorsBy('endpoint', range)).toEqual([
      { group: '', errors: 1 },
      { group: 'embeddings', errors: 1 },
      { group: 'responses', errors: 1 },
    ]);
    // The request log's filter on it.
    const page = await store.listRequestLog({ accountId, surface: 'embeddings' }, { limit: 10 });
    expect(page.rows.map((row) => [row.surface, row.errorCode])).toEqual([
      ['embeddings', null],
      ['embeddings', 'invalid_value'],
    ]);
  });
});
