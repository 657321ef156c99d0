/**
 * The request log (docs/architecture.md, Request log): one row per `/v1` request that got past
 * routing, written in batches off the request path and pruned after `log.retention_days`. No
 * foreign keys: a batch must never fail because of the rows it describes, and the log outlives
 * nothing it points to (it is pruned long before an account is gone). Bodies are stored only for
 * models whose catalog entry turns it on (`log_bodies`), and then capped.
 *
 * Indexes serve the admin searches, newest first: by time, by account, key or model within a time
 * range, and by request id. The ledger gains one on `created_at` for usage over all accounts.
 */
import type { Kysely, Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

export function requestLogMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('request_log')
        .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (column) =>
          engine === 'postgres' ? column.primaryKey() : column.primaryKey().autoIncrement(),
        )
        .addColumn('at', 'bigint', (column) => column.notNull())
        .addColumn('request_id', 'text', (column) => column.notNull())
        .addColumn('account_id', 'text', (column) => column.notNull())
        .addColumn('key_id', 'text', (column) => column.notNull())
        .addColumn('surface', 'text', (column) => column.notNull())
        .addColumn('model', 'text', (column) => column.notNull())
        .addColumn('target', 'text')
        .addColumn('status', 'integer', (column) => column.notNull())
        .addColumn('error_code', 'text')
        .addColumn('stream', 'integer', (column) => column.notNull())
        .addColumn('latency_ms', 'integer', (column) => column.notNull())
        .addColumn('first_byte_ms', 'integer')
        .addColumn('input_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('cached_input_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('cache_write_input_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('output_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('reasoning_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('cost_nanos', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('request_body', 'text')
        .addColumn('response_body', 'text')
        .execute();
      await db.schema.createIndex('request_log_at').on('request_log').columns(['at', 'id']).execute();
      await db.schema.createIndex('request_log_account_at').on('request_log').columns(['account_id', 'at']).execute();
      await db.schema.createIndex('request_log_key_at').on('request_log').columns(['key_id', 'at']).execute();
      await db.schema.createIndex('request_log_model_at').on('request_log').columns(['model', 'at']).execute();
      await db.schema.createIndex('request_log_request_id').on('request_log').column('request_id').execute();
      await db.schema.createIndex('ledger_created_at').on('ledger').column('created_at').execute();
    },
  };
}
