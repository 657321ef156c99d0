/**
 * `appendRequestLog` on SQLite (request-log-queries.ts has the Kysely form PostgreSQL uses): a batch
 * through one INSERT prepared once, run per row in one transaction.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { requestLogRow, type RequestLogRowValues } from '../queries/request-log-queries.js';
import type { Database } from '../schema.js';
import type { RequestLogEntry } from '../store.js';

/**
 * `appendRequestLog` on SQLite: the same rows, all or none of them (one `BEGIN IMMEDIATE`
 * transaction), through an INSERT prepared on first use, while holding Kysely's connection mutex
 * so it never interleaves with another query on the connection.
 */
export function createSqliteRequestLogAppend(db: Kysely<Database>, connection: BetterSqlite3.Database): (entries: readonly RequestLogEntry[]) => Promise<void> {
  // Prepared on first use: the table exists only once the store has been migrated.
  let append: BetterSqlite3.Transaction<(rows: readonly RequestLogRowValues[]) => void> | undefined;
  const prepare = () => {
    const insert = connection.prepare(
      `INSERT INTO request_log (at, request_id, account_id, key_id, surface, model, target, status, error_code, stream, latency_ms, first_byte_ms,
         input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_tokens, cost_nanos, request_body, response_body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    return connection.transaction((rows: readonly RequestLogRowValues[]) => {
      // Positional arguments bind fastest; the order is the column list's above.
      for (const row of rows) {
        insert.run(
          row.at,
          row.request_id,
          row.account_id,
          row.key_id,
          row.surface,
          row.model,
          row.target,
          row.status,
          row.error_code,
          row.stream,
          row.latency_ms,
          row.first_byte_ms,
          row.input_tokens,
          row.cached_input_tokens,
          row.cache_write_input_tokens,
          row.output_tokens,
          row.reasoning_tokens,
          row.cost_nanos,
          row.request_body,
          row.response_body,
        );
      }
    });
  };
  return async (entries) => {
    if (entries.length === 0) return;
    // Every row is checked before the transaction begins, as the Kysely path checks them before its statement.
    const rows = entries.map(requestLogRow);
    await db.connection().execute(async () => (append ??= prepare()).immediate(rows));
  };
}
