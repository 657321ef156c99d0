/**
 * Settling a hold, written once: the statements that end a hold and move its money, with `?`
 * placeholders. SQLite prepares them as they are for the request path's settles
 * (sqlite/sqlite-hold-statements.ts); Kysely binds them on either engine for the expiry sweep
 * (hold-queries.ts), `$n` on PostgreSQL. PostgreSQL's request path settles through
 * `tollgate_apply_hold_operations` (migrations 0008 and 0011, postgres/postgres-hold-batch.ts),
 * which makes the same settlement inside the database, set-based over a whole batch.
 *
 * A settle, by its request or by the sweep: the hold leaves `open` (the guard that decides races;
 * no row back means it was settled or expired already), then its reservation is released and its
 * cost debited in one UPDATE, its key budget's period moves the cost from reserved to spent
 * (SETTLE_KEY_SPEND_SQL, key-budget-queries.ts), and a charge (and, for a request's settle, an
 * excess) is appended to the ledger. The ledger rows take their endpoint (`surface`) from the hold
 * the guarded UPDATE returns, never from the caller, so every way of settling records the endpoint
 * the hold was opened for (migration 0012).
 */
import { sql, type RawBuilder } from 'kysely';

/** Parameters: hold id. A row back means this call settled it. */
export const SETTLE_HOLD_SQL =
  "UPDATE holds SET state = 'settled' WHERE id = ? AND state = 'open' RETURNING account_id, amount_nanos, key_id, budget_period, budget_period_start, surface";

/** Parameters: hold id. The expiry sweep's form: it also reads the last checkpoint, which it bills. */
export const EXPIRE_HOLD_SQL = `UPDATE holds SET state = 'expired' WHERE id = ? AND state = 'open'
  RETURNING account_id, key_id, request_id, model, amount_nanos, checkpoint_cost_nanos, checkpoint_input_tokens,
    checkpoint_cached_input_tokens, checkpoint_output_tokens, checkpoint_reasoning_tokens, budget_period, budget_period_start, surface`;

/** Parameters: held, cost, account id. */
export const RELEASE_HOLD_SQL = 'UPDATE accounts SET reserved_nanos = reserved_nanos - ?, balance_nanos = balance_nanos - ? WHERE id = ?';

/**
 * Parameters: account id, cost, request id, key id, model, input, cached input, cache-write input,
 * output and reasoning tokens, note, created at, surface (the hold's).
 */
export const APPEND_CHARGE_SQL = `INSERT INTO ledger (account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_tokens, note, created_at, surface)
  VALUES (?, 'charge', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Parameters: account id, excess, request id, key id, model, note, created at, surface (the hold's). */
export const APPEND_EXCESS_SQL = `INSERT INTO ledger (account_id, kind, amount_nanos, request_id, key_id, model, note, created_at, surface) VALUES (?, 'excess', ?, ?, ?, ?, ?, ?, ?)`;

/** A statement written with `?` placeholders, with its parameters bound the way Kysely binds any (`$n` on PostgreSQL). */
export function bound(text: string, parameters: readonly unknown[]): RawBuilder<unknown> {
  const fragments = text.split('?');
  if (fragments.length !== parameters.length + 1) throw new Error('placeholders and parameters differ in number');
  return sql(Object.assign(fragments, { raw: fragments }) as unknown as TemplateStringsArray, ...parameters);
}
