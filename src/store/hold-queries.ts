/**
 * Holds: money reserved for a request in flight, then settled at the actual cost or released when
 * its expiry passes. Every step is one transaction whose first statement is a guarded UPDATE, so
 * the database itself decides races: an account cannot be over-reserved, and a hold leaves the
 * `open` state exactly once (settled by its request, or expired by the sweeper, never both).
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { Charge, HoldCheckpoint, NewHold } from './store.js';
import { appendLedgerEntry, assertNonNegativeAmount, assertTokenCounts, chargeCountsAnything, EXCESS_NOTE, EXPIRED_HOLD_NOTE, NO_TOKENS } from './ledger-queries.js';
import { toBigInt, toEpochMilliseconds, toNullableText, toSafeNumber, toText } from './row-decoding.js';

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
        model: hold.model,
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
    assertNonNegativeAmount(charge.excessNanos, 'charge excess');
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
      if (charge.excessNanos > 0n) await appendExcess(transaction, accountId, charge, createdAt);
    }
    return true;
  });
}

/** The cost an upstream reported beyond the hold: recorded for the operator, never debited. */
async function appendExcess(transaction: Kysely<Database>, accountId: string, charge: Charge, createdAt: number): Promise<void> {
  await appendLedgerEntry(transaction, {
    accountId,
    kind: 'excess',
    amountNanos: charge.excessNanos,
    requestId: charge.requestId,
    keyId: charge.keyId,
    model: charge.model,
    tokens: NO_TOKENS,
    note: EXCESS_NOTE,
    createdAt,
  });
}

export async function checkpointHolds(transact: Transact, checkpoints: readonly HoldCheckpoint[]): Promise<void> {
  for (const checkpoint of checkpoints) {
    assertNonNegativeAmount(checkpoint.costNanos, 'checkpoint cost');
    assertTokenCounts(checkpoint.tokens);
  }
  if (checkpoints.length === 0) return;
  await transact(async (transaction) => {
    for (const checkpoint of checkpoints) {
      // The sweep that settles it caps the cost at the hold again (releaseOne).
      await transaction
        .updateTable('holds')
        .set({
          expires_at: toEpochMilliseconds(checkpoint.expiresAt, 'hold expiresAt'),
          checkpoint_cost_nanos: checkpoint.costNanos,
          checkpoint_input_tokens: checkpoint.tokens.inputTokens,
          checkpoint_cached_input_tokens: checkpoint.tokens.cachedInputTokens,
          checkpoint_output_tokens: checkpoint.tokens.outputTokens,
          checkpoint_reasoning_tokens: checkpoint.tokens.reasoningTokens,
        })
        .where('id', '=', checkpoint.holdId)
        .where('state', '=', 'open')
        .execute();
    }
  });
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
      if (await releaseOne(transact, toText(candidate.id, 'holds.id'), cutoff)) released += 1;
    }
    // Every candidate has left the open state (by us or a settle), so the next batch is new ones.
    if (candidates.length < RELEASE_BATCH_SIZE) return released;
  }
}

async function releaseOne(transact: Transact, holdId: string, createdAt: number): Promise<boolean> {
  return transact(async (transaction) => {
    const expired = await transaction
      .updateTable('holds')
      .set({ state: 'expired' })
      .where('id', '=', holdId)
      .where('state', '=', 'open')
      .returning([
        'account_id',
        'key_id',
        'request_id',
        'model',
        'amount_nanos',
        'checkpoint_cost_nanos',
        'checkpoint_input_tokens',
        'checkpoint_cached_input_tokens',
        'checkpoint_output_tokens',
        'checkpoint_reasoning_tokens',
      ])
      .executeTakeFirst();
    if (expired === undefined) return false;
    const accountId = toText(expired.account_id, 'holds.account_id');
    const heldNanos = toBigInt(expired.amount_nanos, 'holds.amount_nanos');
    const checkpointNanos = toBigInt(expired.checkpoint_cost_nanos, 'holds.checkpoint_cost_nanos');
    const costNanos = checkpointNanos < heldNanos ? checkpointNanos : heldNanos;
    const tokens = {
      inputTokens: toSafeNumber(expired.checkpoint_input_tokens, 'holds.checkpoint_input_tokens'),
      cachedInputTokens: toSafeNumber(expired.checkpoint_cached_input_tokens, 'holds.checkpoint_cached_input_tokens'),
      outputTokens: toSafeNumber(expired.checkpoint_output_tokens, 'holds.checkpoint_output_tokens'),
      reasoningTokens: toSafeNumber(expired.checkpoint_reasoning_tokens, 'holds.checkpoint_reasoning_tokens'),
    };
    await transaction
      .updateTable('accounts')
      .set((eb) => ({ reserved_nanos: eb('reserved_nanos', '-', heldNanos), balance_nanos: eb('balance_nanos', '-', costNanos) }))
      .where('id', '=', accountId)
      .execute();
    // What the crashed request had delivered by its last checkpoint is billed, once.
    if (chargeCountsAnything(costNanos, tokens)) {
      await appendLedgerEntry(transaction, {
        accountId,
        kind: 'charge',
        amountNanos: costNanos,
        requestId: toText(expired.request_id, 'holds.request_id'),
        keyId: toText(expired.key_id, 'holds.key_id'),
        model: toNullableText(expired.model, 'holds.model'),
        tokens,
        note: EXPIRED_HOLD_NOTE,
        createdAt,
      });
    }
    return true;
  });
}

export async function countOpenHolds(db: Kysely<Database>, accountId?: string): Promise<number> {
  let query = db.selectFrom('holds').where('state', '=', 'open');
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const row = await query.select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow();
  return toSafeNumber(row.count, 'count');
}
