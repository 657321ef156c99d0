/**
 * Holds: money reserved for a request in flight, then settled at the actual cost or released when
 * its expiry passes. Opening, settling and checkpointing are the request path's and are
 * group-committed (hold-operations.ts); here are the expiry sweep, which settles through the same
 * statements as a request's settle (settlement-sql.ts), and the count. Every step's first
 * statement is a guarded UPDATE, so the database itself decides races: an account cannot be
 * over-reserved, and a hold leaves the `open` state exactly once (settled by its request, or
 * expired by the sweeper, never both).
 */
import type { Kysely } from 'kysely';
import type { Transact } from '../engine.js';
import type { Database } from '../schema.js';
import { heldBudgetOf, settleKeySpend } from './key-budget-queries.js';
import { assertNonNegativeAmount, assertTokenCounts, chargeCountsAnything, EXPIRED_HOLD_NOTE } from './ledger-queries.js';
import { toBigInt, toEpochMilliseconds, toNullableText, toSafeNumber, toText } from './row-decoding.js';
import { APPEND_CHARGE_SQL, bound, EXPIRE_HOLD_SQL, RELEASE_HOLD_SQL } from './settlement-sql.js';

/** How many expired holds one sweep reads at a time. */
const RELEASE_BATCH_SIZE = 500;

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
    const result = await bound(EXPIRE_HOLD_SQL, [holdId]).execute(transaction);
    const expired = result.rows[0] as ExpiredHoldRow | undefined;
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
    await bound(RELEASE_HOLD_SQL, [heldNanos, costNanos, accountId]).execute(transaction);
    // Its key's budget period (key-budget-queries.ts) spends what the account was charged.
    const heldBudget = heldBudgetOf(expired);
    if (heldBudget !== undefined) await settleKeySpend(transaction, heldBudget, heldNanos, costNanos);
    // What the crashed request had delivered by its last checkpoint is billed, once.
    if (chargeCountsAnything(costNanos, tokens)) {
      assertNonNegativeAmount(costNanos, 'ledger amount');
      assertTokenCounts(tokens);
      await bound(APPEND_CHARGE_SQL, [
        accountId,
        costNanos,
        toText(expired.request_id, 'holds.request_id'),
        toText(expired.key_id, 'holds.key_id'),
        toNullableText(expired.model, 'holds.model'),
        tokens.inputTokens,
        tokens.cachedInputTokens,
        0,
        tokens.outputTokens,
        tokens.reasoningTokens,
        EXPIRED_HOLD_NOTE,
        createdAt,
        toNullableText(expired.surface, 'holds.surface'),
      ]).execute(transaction);
    }
    return true;
  });
}

/** The columns EXPIRE_HOLD_SQL returns. */
interface ExpiredHoldRow {
  account_id: unknown;
  key_id: unknown;
  request_id: unknown;
  model: unknown;
  amount_nanos: unknown;
  checkpoint_cost_nanos: unknown;
  checkpoint_input_tokens: unknown;
  checkpoint_cached_input_tokens: unknown;
  checkpoint_output_tokens: unknown;
  checkpoint_reasoning_tokens: unknown;
  budget_period: unknown;
  budget_period_start: unknown;
  surface: unknown;
}

export async function countOpenHolds(db: Kysely<Database>, accountId?: string): Promise<number> {
  let query = db.selectFrom('holds').where('state', '=', 'open');
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const row = await query.select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow();
  return toSafeNumber(row.count, 'count');
}
