/**
 * Quota slices outside the request path's batches (docs/architecture.md, Money: "Quota slices"):
 * a slice granted, closed (its unused part given back), its lease renewed, recalled by another
 * process, dropped once empty, swept when its lease has passed, listed. Settling a hold out of a
 * slice and moving one into a hold row are the batches' (sqlite/sqlite-slice-statements.ts, and
 * migration 0015 on PostgreSQL).
 *
 * Every statement that changes a slice's amount changes its account's `reserved_nanos` and
 * `sliced_nanos` by as much, in the same transaction, so the account's guarded arithmetic always
 * counts what a slice holds as it counts an open hold. Each step is decided by a guard in the
 * statement that writes (the grant's balance check, a close only of a slice not closed yet, a sweep
 * only of a lease that has passed), never by what was read before it.
 *
 * On PostgreSQL rows are locked in the batches' global order (holds, then accounts, then slices,
 * each by id): a step that changes an account locks it before the slice, and a step that changes
 * several slices locks them by id first.
 */
import type { Kysely } from 'kysely';
import type { Transact } from '../engine.js';
import type { Database, StoreEngine } from '../schema.js';
import type { SliceRecord, SliceRequest, SliceState } from '../slice-records.js';
import { assertNonNegativeAmount } from './ledger-queries.js';
import { toBigInt, toDate, toEpochMilliseconds, toFlag, toText } from './row-decoding.js';

/** How many expired slices one sweep reads at a time. */
const RELEASE_BATCH_SIZE = 500;

export async function grantSlice(transact: Transact, engine: StoreEngine, request: SliceRequest, now: Date): Promise<SliceRecord | undefined> {
  if (typeof request.maxNanos !== 'bigint' || request.maxNanos <= 0n) throw new RangeError('a slice needs a positive largest size');
  assertNonNegativeAmount(request.minNanos, 'smallest slice');
  if (!Number.isSafeInteger(request.headroom) || request.headroom < 1) throw new RangeError(`slice headroom must be a positive integer, got ${request.headroom}`);
  const leaseUntil = toEpochMilliseconds(request.leaseUntil, 'slice leaseUntil');
  const createdAt = toEpochMilliseconds(now, 'now');
  const headroom = BigInt(request.headroom);
  return transact(async (transaction) => {
    let read = transaction.selectFrom('accounts').select(['balance_nanos', 'reserved_nanos', 'disabled']).where('id', '=', request.accountId);
    if (engine === 'postgres') read = read.forNoKeyUpdate();
    const account = await read.executeTakeFirst();
    if (account === undefined || toFlag(account.disabled, 'accounts.disabled')) return undefined;
    const unreserved = toBigInt(account.balance_nanos, 'accounts.balance_nanos') - toBigInt(account.reserved_nanos, 'accounts.reserved_nanos');
    const share = unreserved / headroom;
    const amountNanos = share < request.maxNanos ? share : request.maxNanos;
    if (amountNanos <= 0n || amountNanos < request.minNanos) return undefined;
    // The guard decides: the slice is granted only while the unreserved balance is `headroom` times it.
    const reserved = await transaction
      .updateTable('accounts')
      .set((eb) => ({ reserved_nanos: eb('reserved_nanos', '+', amountNanos), sliced_nanos: eb('sliced_nanos', '+', amountNanos) }))
      .where('id', '=', request.accountId)
      .where('disabled', '=', 0)
      .where((eb) => eb(eb('balance_nanos', '-', eb.ref('reserved_nanos')), '>=', amountNanos * headroom))
      .executeTakeFirst();
    if (reserved.numUpdatedRows !== 1n) return undefined;
    await transaction
      .insertInto('account_slices')
      .values({ id: request.id, account_id: request.accountId, owner: request.owner, amount_nanos: amountNanos, state: 'active', lease_until: leaseUntil, created_at: createdAt })
      .execute();
    return { id: request.id, accountId: request.accountId, owner: request.owner, amountNanos, state: 'active', leaseUntil: new Date(leaseUntil), createdAt: new Date(createdAt) };
  });
}

export async function closeSlice(transact: Transact, engine: StoreEngine, sliceId: string, owner: string, returnNanos: bigint): Promise<boolean> {
  assertNonNegativeAmount(returnNanos, 'slice return');
  return transact(async (transaction) => {
    const slice = await transaction.selectFrom('account_slices').select('account_id').where('id', '=', sliceId).executeTakeFirst();
    if (slice === undefined) return false;
    const accountId = toText(slice.account_id, 'account_slices.account_id');
    await lockAccount(transaction, engine, accountId);
    const closed = await transaction
      .updateTable('account_slices')
      .set((eb) => ({ state: 'closed', amount_nanos: eb('amount_nanos', '-', returnNanos) }))
      .where('id', '=', sliceId)
      .where('owner', '=', owner)
      .where('state', '<>', 'closed')
      .where('amount_nanos', '>=', returnNanos)
      .executeTakeFirst();
    if (closed.numUpdatedRows !== 1n) return false;
    await unreserve(transaction, accountId, returnNanos);
    return true;
  });
}

export async function renewSlices(transact: Transact, engine: StoreEngine, owner: string, sliceIds: readonly string[], leaseUntil: Date): Promise<string[]> {
  if (sliceIds.length === 0) return [];
  const until = toEpochMilliseconds(leaseUntil, 'slice leaseUntil');
  return transact(async (transaction) => {
    if (engine === 'postgres') await transaction.selectFrom('account_slices').select('id').where('id', 'in', sliceIds).where('owner', '=', owner).orderBy('id').forNoKeyUpdate().execute();
    const rows = await transaction.updateTable('account_slices').set({ lease_until: until }).where('id', 'in', sliceIds).where('owner', '=', owner).returning('id').execute();
    return rows.map((row) => toText(row.id, 'account_slices.id'));
  });
}

export async function recallSlices(transact: Transact, engine: StoreEngine, accountId: string, exceptOwner: string): Promise<string[]> {
  return transact(async (transaction) => {
    if (engine === 'postgres') {
      await transaction.selectFrom('account_slices').select('id').where('account_id', '=', accountId).where('state', '=', 'active').where('owner', '<>', exceptOwner).orderBy('id').forNoKeyUpdate().execute();
    }
    const recalled = await transaction
      .updateTable('account_slices')
      .set({ state: 'recalled' })
      .where('account_id', '=', accountId)
      .where('state', '=', 'active')
      .where('owner', '<>', exceptOwner)
      .returning('id')
      .execute();
    return recalled.map((row) => toText(row.id, 'account_slices.id'));
  });
}

export async function recalledSlices(db: Kysely<Database>, owner: string): Promise<string[]> {
  const rows = await db.selectFrom('account_slices').select('id').where('owner', '=', owner).where('state', '=', 'recalled').execute();
  return rows.map((row) => toText(row.id, 'account_slices.id'));
}

export async function dropClosedSlices(transact: Transact, engine: StoreEngine, owner: string): Promise<void> {
  await transact(async (transaction) => {
    const empty = () => transaction.selectFrom('account_slices').where('owner', '=', owner).where('state', '=', 'closed').where('amount_nanos', '=', 0n);
    if (engine === 'postgres') await empty().select('id').orderBy('id').forNoKeyUpdate().execute();
    await transaction.deleteFrom('account_slices').where('owner', '=', owner).where('state', '=', 'closed').where('amount_nanos', '=', 0n).execute();
  });
}

/**
 * Each expired slice is ended in its own transaction, behind its lease: a renewal that commits
 * first keeps it, and a slice swept is gone for its owner too (its renewal finds nothing).
 */
export async function releaseExpiredSlices(db: Kysely<Database>, transact: Transact, engine: StoreEngine, now: Date): Promise<number> {
  const cutoff = BigInt(toEpochMilliseconds(now, 'now'));
  let released = 0;
  for (;;) {
    const candidates = await db.selectFrom('account_slices').select(['id', 'account_id']).where('lease_until', '<=', cutoff).orderBy('lease_until', 'asc').limit(RELEASE_BATCH_SIZE).execute();
    for (const candidate of candidates) {
      const ended = await transact(async (transaction) => {
        const accountId = toText(candidate.account_id, 'account_slices.account_id');
        await lockAccount(transaction, engine, accountId);
        const swept = await transaction.deleteFrom('account_slices').where('id', '=', candidate.id).where('lease_until', '<=', cutoff).returning('amount_nanos').executeTakeFirst();
        if (swept === undefined) return false;
        const amountNanos = toBigInt(swept.amount_nanos, 'account_slices.amount_nanos');
        if (amountNanos > 0n) await unreserve(transaction, accountId, amountNanos);
        return true;
      });
      if (ended) released += 1;
    }
    // Every candidate is gone (swept by us or another process) or renewed, so the next read is new ones.
    if (candidates.length < RELEASE_BATCH_SIZE) return released;
  }
}

export async function listSlices(db: Kysely<Database>, accountId?: string): Promise<SliceRecord[]> {
  let query = db.selectFrom('account_slices').selectAll();
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const rows = await query.orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  return rows.map((row) => ({
    id: toText(row.id, 'account_slices.id'),
    accountId: toText(row.account_id, 'account_slices.account_id'),
    owner: toText(row.owner, 'account_slices.owner'),
    amountNanos: toBigInt(row.amount_nanos, 'account_slices.amount_nanos'),
    state: toSliceState(row.state),
    leaseUntil: toDate(row.lease_until, 'account_slices.lease_until'),
    createdAt: toDate(row.created_at, 'account_slices.created_at'),
  }));
}

/** On PostgreSQL, the account's row lock before a slice's (the batches' order); SQLite has one writer. */
async function lockAccount(transaction: Kysely<Database>, engine: StoreEngine, accountId: string): Promise<void> {
  if (engine === 'postgres') await transaction.selectFrom('accounts').select('id').where('id', '=', accountId).forNoKeyUpdate().execute();
}

/** What left a slice leaves the account's reserved amount, and its sliced part, alike. */
async function unreserve(transaction: Kysely<Database>, accountId: string, amountNanos: bigint): Promise<void> {
  await transaction
    .updateTable('accounts')
    .set((eb) => ({ reserved_nanos: eb('reserved_nanos', '-', amountNanos), sliced_nanos: eb('sliced_nanos', '-', amountNanos) }))
    .where('id', '=', accountId)
    .execute();
}

const SLICE_STATES: readonly SliceState[] = ['active', 'recalled', 'closed'];

function toSliceState(value: unknown): SliceState {
  const state = SLICE_STATES.find((known) => known === value);
  if (state === undefined) throw new TypeError(`account_slices.state: unknown state ${JSON.stringify(value)}`);
  return state;
}
