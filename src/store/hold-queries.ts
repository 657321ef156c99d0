/**
 * Holds: money reserved for a request in flight, then settled at the actual cost or released when
 * its expiry passes. Every step is one transaction whose first statement is a guarded UPDATE, so
 * the database itself decides races: an account cannot be over-reserved, and a hold leaves the
 * `open` state exactly once (settled by its request, or expired by the sweeper, never both).
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { Charge, NewHold } from './store.js';
import { appendLedgerEntry, assertNonNegativeAmount, assertTokenCounts, chargeCountsAnything } from './ledger-queries.js';
import { toBigInt, toEpochMilliseconds, toSafeNumber, toText } from './row-decoding.js';

/** Runs `work` in one database transaction (engine-specific: see open-store.ts). */
export type Transact = <T>(work: (transaction: Kysely<Database>) => Promise<T>) => Promise<T>;

/** How many expired holds one sweep reads at a time. */
const RELEASE_BATCH_SIZE = 500;

export async function openHold(transact: Transact, hold: NewHold, now: Date): Promise<boolean> {
  assertNonNegativeAmount(hold.amountNanos, 'hold amount');
  const expiresAt = toEpochMilliseconds(hold.expiresAt, 'hold expiresAt');
  const createdAt = toEpochMilliseconds(now, 'now');
  return transact(async (transaction) => {
    // Check and reserve in one statement: concurrent holds on one account serialize on its row,
    // and each re-evaluates the guard against the reservation the previous one committed.
    const reserved = await transaction
      .updateTable('accounts')
      .set((eb) => ({ reserved_nanos: eb('reserved_nanos', '+', hold.amountNanos) }))
      .where('id', '=', hold.accountId)
      .where('disabled', '=', 0)
      .where((eb) => eb(eb('balance_nanos', '-', eb.ref('reserved_nanos')), '>=', hold.amountNanos))
      .executeTakeFirst();
    if (reserved.numUpdatedRows !== 1n) return false;
    await transaction
      .insertInto('holds')
      .values({
        id: hold.id,
        account_id: hold.accountId,
        key_id: hold.keyId,
        request_id: hold.requestId,
        amount_nanos: hold.amountNanos,
        state: 'open',
        expires_at: expiresAt,
        created_at: createdAt,
      })
      .execute();
    return true;
  });
}

export async function settleHold(transact: Transact, holdId: string, charge: Charge | null, now: Date): Promise<boolean> {
  if (charge !== null) {
    assertNonNegativeAmount(charge.costNanos, 'charge cost');
    assertTokenCounts(charge);
  }
  const createdAt = toEpochMilliseconds(now, 'now');
  return transact(async (transaction) => {
    const settled = await transaction
      .updateTable('holds')
      .set({ state: 'settled' })
      .where('id', '=', holdId)
      .where('state', '=', 'open')
      .returning(['account_id', 'amount_nanos'])
      .executeTakeFirst();
    if (settled === undefined) return false;
    const accountId = toText(settled.account_id, 'holds.account_id');
    const heldNanos = toBigInt(settled.amount_nanos, 'holds.amount_nanos');
    const billed = charge !== null && chargeCountsAnything(charge.costNanos, charge);
    const costNanos = billed ? charge.costNanos : 0n;
    await transaction
      .updateTable('accounts')
      .set((eb) => ({
        reserved_nanos: eb('reserved_nanos', '-', heldNanos),
        balance_nanos: eb('balance_nanos', '-', costNanos),
      }))
      .where('id', '=', accountId)
      .execute();
    if (billed) {
      await appendLedgerEntry(transaction, {
        accountId,
        kind: 'charge',
        amountNanos: costNanos,
        requestId: charge.requestId,
        keyId: charge.keyId,
        model: charge.model,
        tokens: charge,
        note: null,
        createdAt,
      });
    }
    return true;
  });
}

export async function extendHold(db: Kysely<Database>, holdId: string, expiresAt: Date): Promise<boolean> {
  const updated = await db
    .updateTable('holds')
    .set({ expires_at: toEpochMilliseconds(expiresAt, 'hold expiresAt') })
    .where('id', '=', holdId)
    .where('state', '=', 'open')
    .executeTakeFirst();
  return updated.numUpdatedRows === 1n;
}

/**
 * Each hold is released in its own transaction behind the same `state = 'open'` guard as settle,
 * so a request that settles while the sweep runs wins or loses cleanly, never both.
 */
export async function releaseExpiredHolds(db: Kysely<Database>, transact: Transact, now: Date): Promise<number> {
  const cutoff = toEpochMilliseconds(now, 'now');
  let released = 0;
  for (;;) {
    const candidates = await db
      .selectFrom('holds')
      .select('id')
      .where('state', '=', 'open')
      .where('expires_at', '<=', BigInt(cutoff))
      .orderBy('expires_at', 'asc')
      .limit(RELEASE_BATCH_SIZE)
      .execute();
    for (const candidate of candidates) {
      if (await releaseOne(transact, toText(candidate.id, 'holds.id'))) released += 1;
    }
    // Every candidate has left the open state (by us or a settle), so the next batch is new ones.
    if (candidates.length < RELEASE_BATCH_SIZE) return released;
  }
}

async function releaseOne(transact: Transact, holdId: string): Promise<boolean> {
  return transact(async (transaction) => {
    const expired = await transaction
      .updateTable('holds')
      .set({ state: 'expired' })
      .where('id', '=', holdId)
      .where('state', '=', 'open')
      .returning(['account_id', 'amount_nanos'])
      .executeTakeFirst();
    if (expired === undefined) return false;
    const heldNanos = toBigInt(expired.amount_nanos, 'holds.amount_nanos');
    await transaction
      .updateTable('accounts')
      .set((eb) => ({ reserved_nanos: eb('reserved_nanos', '-', heldNanos) }))
      .where('id', '=', toText(expired.account_id, 'holds.account_id'))
      .execute();
    return true;
  });
}

export async function countOpenHolds(db: Kysely<Database>, accountId?: string): Promise<number> {
  let query = db.selectFrom('holds').where('state', '=', 'open');
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const row = await query.select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow();
  return toSafeNumber(row.count, 'count');
}
