/**
 * Quota slices in the store (migration 0015), on SQLite always and on PostgreSQL when
 * TOLLGATE_TEST_POSTGRES_URL is set: a slice is counted in its account's reserved amount as a
 * hold is (so holds and debits see it), granted at most 1/headroom of the unreserved balance; a hold
 * admitted from it settles once out of it (a retry finds its row), or moves from it into an open
 * row at its first checkpoint and from then on settles and expires as any hold; a slice is closed
 * once, recalled, renewed, and ended by the sweep when its lease has passed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestDatabase } from '../../test/support/databases.js';
import { rawRows } from '../../test/support/raw-rows.js';
import { newAccountWithKey, openTestStore, type TestStore } from '../../test/support/test-store.js';
import type { SliceHold } from './slice-records.js';
import type { Charge, Store } from './store.js';

const unique = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 12)}`;
const HOUR = 3_600_000;
const TOKENS = { inputTokens: 3, cachedInputTokens: 0, outputTokens: 4, reasoningTokens: 0 };

describe.each(engines)('quota slices in the store on %s', (engine) => {
  let opened: TestStore;
  let database: TestDatabase;
  let store: Store;
  let clock = new Date('2032-05-01T00:00:00.000Z');

  beforeAll(async () => {
    opened = await openTestStore(engine, { now: () => clock });
    ({ database, store } = opened);
  });

  afterAll(() => opened?.close());

  const newAccount = (balance: bigint) => newAccountWithKey(store, balance, clock);

  const grant = (accountId: string, owner: string, maxNanos: bigint, minNanos = 1n, headroom = 2, leaseUntil = new Date(clock.getTime() + HOUR)) =>
    store.grantSlice({ id: unique('slice'), accountId, owner, maxNanos, minNanos, headroom, leaseUntil });

  const admitted = (sliceId: string, accountId: string, keyId: string, amountNanos: bigint): SliceHold & { holdId: string } => ({
    holdId: unique('hold'),
    sliceId,
    accountId,
    keyId,
    requestId: unique('req'),
    model: 'gpt-test',
    amountNanos,
    surface: 'chat-completions',
    admittedAt: clock,
  });

  const charge = (hold: { requestId: string; keyId: string }, costNanos: bigint): Charge => ({ requestId: hold.requestId, keyId: hold.keyId, model: 'gpt-test', costNanos, excessNanos: 0n, ...TOKENS });

  /** The account's raw reserved and sliced amounts, its balance, and its slices' amounts by id. */
  async function money(accountId: string) {
    const [row] = await rawRows(database, 'SELECT balance_nanos, reserved_nanos, sliced_nanos FROM accounts WHERE id = ?', [accountId]);
    const slices = Object.fromEntries((await store.listSlices(accountId)).map((slice) => [slice.id, [slice.state, slice.amountNanos]]));
    return { balance: row!.balance_nanos, reserved: row!.reserved_nanos, sliced: row!.sliced_nanos, slices };
  }

  const holdRow = async (holdId: string) => (await rawRows(database, 'SELECT state, amount_nanos, slice_id, surface, checkpoint_cost_nanos FROM holds WHERE id = ?', [holdId]))[0];

  it('grants a slice counted in the reserved amount as a hold is, shrinking with the unreserved balance, never below its smallest', async () => {
    const { accountId, keyId } = await newAccount(1_000n);
    const first = await grant(accountId, 'owner-a', 300n);
    // 1/2 of 1,000 unreserved is more than the largest: the largest.
    expect(first).toMatchObject({ accountId, owner: 'owner-a', amountNanos: 300n, state: 'active' });
    // Then 1/2 of the 700 left: still the largest; then 1/2 of 400: 200; then 1/2 of 200 is below the smallest.
    expect((await grant(accountId, 'owner-b', 300n))?.amountNanos).toBe(300n);
    expect((await grant(accountId, 'owner-c', 300n))?.amountNanos).toBe(200n);
    expect(await grant(accountId, 'owner-d', 300n, 150n)).toBeUndefined();
    expect(await money(accountId)).toMatchObject({ balance: 1_000n, reserved: 800n, sliced: 800n });
    // The account's open holds reserve nothing; the slices are listed apart.
    expect((await store.findAccount(accountId))!.reservedNanos).toBe(0n);

    // What is sliced is not spendable otherwise: a hold or a debit of one more than the rest is refused.
    const hold = { id: unique('hold'), accountId, keyId, requestId: unique('req'), model: 'gpt-test', amountNanos: 201n, expiresAt: new Date(clock.getTime() + HOUR) };
    expect(await store.openHold(hold)).toBe(false);
    expect(await store.debit(accountId, 201n, 'too much')).toBeUndefined();
    expect(await store.openHold({ ...hold, amountNanos: 200n })).toBe(true);
    expect(await money(accountId)).toMatchObject({ reserved: 1_000n, sliced: 800n });
  });

  it('grants nothing to a disabled account', async () => {
    const { accountId } = await newAccount(1_000n);
    await store.setAccountDisabled(accountId, true);
    expect(await grant(accountId, 'owner-a', 100n)).toBeUndefined();
    expect(await money(accountId)).toMatchObject({ reserved: 0n, sliced: 0n, slices: {} });
  });

  it('settles a hold admitted from a slice once: its row written as settled, its amount out of the slice, a retry changing nothing', async () => {
    const { accountId, keyId } = await newAccount(1_000n);
    const slice = (await grant(accountId, 'owner-a', 400n))!;
    const hold = admitted(slice.id, accountId, keyId, 150n);
    expect(await store.settleHold(hold.holdId, charge(hold, 120n), hold)).toBe(true);
    expect(await money(accountId)).toEqual({ balance: 880n, reserved: 250n, sliced: 250n, slices: { [slice.id]: ['active', 250n] } });
    expect(await holdRow(hold.holdId)).toEqual({ state: 'settled', amount_nanos: 150n, slice_id: slice.id, surface: 'chat-completions', checkpoint_cost_nanos: 0n });
    const ledger = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(ledger).toMatchObject([{ amountNanos: 120n, requestId: hold.requestId, surface: 'chat-completions' }]);

    // The retrier's second attempt finds the hold's row: nothing more is billed or taken.
    expect(await store.settleHold(hold.holdId, charge(hold, 120n), hold)).toBe(false);
    expect(await money(accountId)).toMatchObject({ balance: 880n, reserved: 250n, sliced: 250n });
    expect((await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge')).toHaveLength(1);

    // Nothing to bill: the hold still leaves its slice, with a row.
    const free = admitted(slice.id, accountId, keyId, 50n);
    expect(await store.settleHold(free.holdId, null, free)).toBe(true);
    expect(await money(accountId)).toMatchObject({ balance: 880n, reserved: 200n, sliced: 200n });
  });

  it('settles nothing from a slice that is gone, is of another account, or holds too little', async () => {
    const { accountId, keyId } = await newAccount(1_000n);
    const other = await newAccount(1_000n);
    const slice = (await grant(accountId, 'owner-a', 100n))!;
    const tooBig = admitted(slice.id, accountId, keyId, 101n);
    const elsewhere = { ...admitted(slice.id, other.accountId, other.keyId, 10n) };
    const gone = admitted('slice_gone', accountId, keyId, 10n);
    for (const hold of [tooBig, elsewhere, gone]) expect(await store.settleHold(hold.holdId, charge(hold, 5n), hold)).toBe(false);
    expect(await money(accountId)).toMatchObject({ balance: 1_000n, reserved: 100n, sliced: 100n });
    expect(await money(other.accountId)).toMatchObject({ balance: 1_000n, reserved: 0n, sliced: 0n });
    for (const hold of [tooBig, elsewhere, gone]) expect(await holdRow(hold.holdId)).toBeUndefined();
  });

  it('moves a hold from its slice into an open row at its first checkpoint; from then on it settles, and expires, as any hold', async () => {
    const { accountId, keyId } = await newAccount(1_000n);
    const slice = (await grant(accountId, 'owner-a', 400n))!;
    const running = admitted(slice.id, accountId, keyId, 150n);
    const expiresAt = new Date(clock.getTime() + HOUR);
    await store.checkpointHolds([{ holdId: running.holdId, expiresAt, costNanos: 40n, tokens: TOKENS, slice: running }]);
    // The account reserves as much as before: the hold's part moved from the slice to its row.
    expect(await money(accountId)).toEqual({ balance: 1_000n, reserved: 400n, sliced: 250n, slices: { [slice.id]: ['active', 250n] } });
    expect(await holdRow(running.holdId)).toEqual({ state: 'open', amount_nanos: 150n, slice_id: slice.id, surface: 'chat-completions', checkpoint_cost_nanos: 40n });
    expect(await store.countOpenHolds(accountId)).toBe(1);
    // A later checkpoint that still names the slice moves nothing more.
    await store.checkpointHolds([{ holdId: running.holdId, expiresAt, costNanos: 60n, tokens: TOKENS, slice: running }]);
    expect(await money(accountId)).toMatchObject({ reserved: 400n, sliced: 250n });
    expect(await holdRow(running.holdId)).toMatchObject({ checkpoint_cost_nanos: 60n });
    // Its settlement (which still names the slice) settles the row, once.
    expect(await store.settleHold(running.holdId, charge(running, 90n), running)).toBe(true);
    expect(await store.settleHold(running.holdId, charge(running, 90n), running)).toBe(false);
    expect(await money(accountId)).toEqual({ balance: 910n, reserved: 250n, sliced: 250n, slices: { [slice.id]: ['active', 250n] } });

    // A converted hold whose process died expires and bills its last checkpoint.
    const crashed = admitted(slice.id, accountId, keyId, 100n);
    await store.checkpointHolds([{ holdId: crashed.holdId, expiresAt: new Date(clock.getTime() + 1_000), costNanos: 70n, tokens: TOKENS, slice: crashed }]);
    clock = new Date(clock.getTime() + 2_000);
    expect(await store.releaseExpiredHolds(clock)).toBe(1);
    expect(await money(accountId)).toMatchObject({ balance: 840n, reserved: 150n, sliced: 150n });
    expect((await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge').map((entry) => [entry.amountNanos, entry.note])).toEqual([
      [90n, null],
      [70n, expect.stringMatching(/hold expired/)],
    ]);
  });

  it('bills a hold once when its first checkpoint and its settlement go together', async () => {
    const { accountId, keyId } = await newAccount(1_000n);
    const slice = (await grant(accountId, 'owner-a', 400n))!;
    const hold = admitted(slice.id, accountId, keyId, 150n);
    const [, settled] = await Promise.all([
      store.checkpointHolds([{ holdId: hold.holdId, expiresAt: new Date(clock.getTime() + HOUR), costNanos: 40n, tokens: TOKENS, slice: hold }]),
      store.settleHold(hold.holdId, charge(hold, 100n), hold),
    ]);
    expect(settled).toBe(true);
    expect(await money(accountId)).toEqual({ balance: 900n, reserved: 250n, sliced: 250n, slices: { [slice.id]: ['active', 250n] } });
    expect(await holdRow(hold.holdId)).toMatchObject({ state: 'settled' });
    // Settled first, checkpointed after: the checkpoint finds its row and moves nothing.
    const late = admitted(slice.id, accountId, keyId, 50n);
    await Promise.all([
      store.settleHold(late.holdId, charge(late, 10n), late),
      store.checkpointHolds([{ holdId: late.holdId, expiresAt: new Date(clock.getTime() + HOUR), costNanos: 5n, tokens: TOKENS, slice: late }]),
    ]);
    expect(await money(accountId)).toMatchObject({ balance: 890n, reserved: 200n, sliced: 200n });
    expect(await holdRow(late.holdId)).toMatchObject({ state: 'settled' });
  });

  it('closes a slice once, giving its unused part back; only its owner closes it', async () => {
    const { accountId, keyId } = await newAccount(1_000n);
    const slice = (await grant(accountId, 'owner-a', 400n))!;
    const inUse = admitted(slice.id, accountId, keyId, 150n);
    expect(await store.closeSlice(slice.id, 'owner-b', 250n)).toBe(false);
    expect(await store.closeSlice(slice.id, 'owner-a', 250n)).toBe(true);
    expect(await money(accountId)).toEqual({ balance: 1_000n, reserved: 150n, sliced: 150n, slices: { [slice.id]: ['closed', 150n] } });
    // A close tried again after one that committed gives nothing back twice.
    expect(await store.closeSlice(slice.id, 'owner-a', 250n)).toBe(false);
    expect(await money(accountId)).toMatchObject({ reserved: 150n, sliced: 150n });
    // The hold admitted before the close still settles out of it; then it is empty and dropped.
    expect(await store.settleHold(inUse.holdId, charge(inUse, 100n), inUse)).toBe(true);
    expect(await money(accountId)).toEqual({ balance: 900n, reserved: 0n, sliced: 0n, slices: { [slice.id]: ['closed', 0n] } });
    await store.dropClosedSlices('owner-a');
    expect(await store.listSlices(accountId)).toEqual([]);
  });

  it("recalls other owners' active slices of the account, which their owners then close", async () => {
    const { accountId } = await newAccount(1_000n);
    const mine = (await grant(accountId, 'owner-a', 100n))!;
    const theirs = (await grant(accountId, 'owner-b', 100n))!;
    const elsewhere = (await grant((await newAccount(1_000n)).accountId, 'owner-b', 100n))!;
    expect(await store.recallSlices(accountId, 'owner-a')).toEqual([theirs.id]);
    expect(await store.recalledSlices('owner-b')).toEqual([theirs.id]);
    expect(await store.recalledSlices('owner-a')).toEqual([]);
    expect(await store.recallSlices(accountId, 'owner-a')).toEqual([]);
    expect(await store.closeSlice(theirs.id, 'owner-b', 100n)).toBe(true);
    const states = Object.fromEntries((await store.listSlices()).map((slice) => [slice.id, slice.state]));
    expect([states[mine.id], states[theirs.id], states[elsewhere.id]]).toEqual(['active', 'closed', 'active']);
  });

  it('ends a slice whose lease has passed, giving back what is left; a renewed one stays', async () => {
    const { accountId, keyId } = await newAccount(1_000n);
    const dying = (await grant(accountId, 'owner-dead', 200n, 1n, 2, new Date(clock.getTime() + 1_000)))!;
    const living = (await grant(accountId, 'owner-alive', 200n, 1n, 2, new Date(clock.getTime() + 1_000)))!;
    // A hold the dead owner moved into a row stays; the rest of its slice comes back.
    const converted = admitted(dying.id, accountId, keyId, 50n);
    await store.checkpointHolds([{ holdId: converted.holdId, expiresAt: new Date(clock.getTime() + HOUR), costNanos: 1n, tokens: TOKENS, slice: converted }]);
    expect(await store.renewSlices('owner-alive', [living.id, dying.id], new Date(clock.getTime() + HOUR))).toEqual([living.id]);
    clock = new Date(clock.getTime() + 2_000);
    expect(await store.releaseExpiredSlices(clock)).toBe(1);
    expect(await money(accountId)).toEqual({ balance: 1_000n, reserved: 250n, sliced: 200n, slices: { [living.id]: ['active', 200n] } });
    expect(await store.renewSlices('owner-dead', [dying.id], new Date(clock.getTime() + HOUR))).toEqual([]);
    // A hold admitted from the swept slice that never reached a row settles nothing.
    const lost = admitted(dying.id, accountId, keyId, 10n);
    expect(await store.settleHold(lost.holdId, charge(lost, 5n), lost)).toBe(false);
    expect(await money(accountId)).toMatchObject({ balance: 1_000n, reserved: 250n });
  });
});
