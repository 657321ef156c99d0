/**
 * Key budgets in the hold's transaction (docs/architecture.md, Money). Opening a hold for a key
 * with a budget runs one more guarded statement after the balance's: an upsert of the key's spend
 * row for the hold's period that adds the hold to the row's reservation only if the period's spend,
 * its open holds and this hold stay within the budget, read from the key in the same statement.
 * The database decides races as it does for the balance: concurrent upserts of one row serialize
 * on it, and each re-evaluates the guard against what the previous one committed. Settling or
 * expiring the hold moves its cost from reserved to spent in the same row. A new period is a new
 * row, so nothing has to reset budgets.
 *
 * Each statement is written once, with `?` placeholders: SQLite prepares it as it is
 * (sqlite/sqlite-hold-statements.ts), Kysely binds it on either engine (the expiry sweep, hold-queries.ts;
 * settlement-sql.ts has the rest of a settle).
 * PostgreSQL's group-committed holds run the same SQL as functions (migrations 0006 and 0008).
 */
import type { Kysely } from 'kysely';
import { toBigInt, toBudgetPeriod, toEpochMilliseconds, toText } from './row-decoding.js';
import type { Database } from '../schema.js';
import { bound } from './settlement-sql.js';
import type { BudgetPeriod, BudgetWindow } from '../store.js';

/**
 * Parameters: period start, amount, key id, period, amount. One row inserted or updated means
 * reserved; none means the budget cannot cover it (or the key no longer has a budget of that
 * period: refused until the key cache catches up, within a second).
 */
export const RESERVE_KEY_BUDGET_SQL = `INSERT INTO key_spend (key_id, period, period_start, spent_nanos, reserved_nanos)
  SELECT id, budget_period, CAST(? AS bigint), 0, CAST(? AS bigint) FROM api_keys WHERE id = ? AND budget_period = ? AND budget_nanos >= ?
  ON CONFLICT (key_id, period, period_start) DO UPDATE SET reserved_nanos = key_spend.reserved_nanos + excluded.reserved_nanos
  WHERE key_spend.spent_nanos + key_spend.reserved_nanos + excluded.reserved_nanos
    <= (SELECT budget_nanos FROM api_keys WHERE api_keys.id = key_spend.key_id AND api_keys.budget_period = key_spend.period)`;

/** Parameters: held, cost, key id, period, period start. */
export const SETTLE_KEY_SPEND_SQL =
  'UPDATE key_spend SET reserved_nanos = reserved_nanos - ?, spent_nanos = spent_nanos + ? WHERE key_id = ? AND period = ? AND period_start = ?';

export function reserveKeyBudgetParameters(keyId: string, window: BudgetWindow, amountNanos: bigint): unknown[] {
  return [toEpochMilliseconds(window.start, 'budget period start'), amountNanos, keyId, window.period, amountNanos];
}

/** The budget period a hold counts against, as its row keeps it. */
export interface HeldBudget {
  keyId: string;
  period: BudgetPeriod;
  periodStart: bigint;
}

/** The budget columns a settled or expired hold returned; undefined when its key had no budget. */
export function heldBudgetOf(row: { key_id: unknown; budget_period: unknown; budget_period_start: unknown }): HeldBudget | undefined {
  if (row.budget_period === null) return undefined;
  return {
    keyId: toText(row.key_id, 'holds.key_id'),
    period: toBudgetPeriod(row.budget_period, 'holds.budget_period'),
    periodStart: toBigInt(row.budget_period_start, 'holds.budget_period_start'),
  };
}

export function settleKeySpendParameters(held: HeldBudget, heldNanos: bigint, costNanos: bigint): unknown[] {
  return [heldNanos, costNanos, held.keyId, held.period, held.periodStart];
}

/** SETTLE_KEY_SPEND_SQL in a Kysely transaction: a settled or expired hold's cost moves to its period's spend. */
export async function settleKeySpend(transaction: Kysely<Database>, held: HeldBudget, heldNanos: bigint, costNanos: bigint): Promise<void> {
  await bound(SETTLE_KEY_SPEND_SQL, settleKeySpendParameters(held, heldNanos, costNanos)).execute(transaction);
}
