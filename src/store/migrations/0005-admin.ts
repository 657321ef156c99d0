/**
 * The admin API (docs/architecture.md): admin tokens (not API keys: their own table and prefix,
 * stored as SHA-256 hashes) and the append-only audit log of every admin mutation. The ledger's
 * `debit` kind came with 0003's rebuild of the ledger.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

export function adminMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('admin_tokens')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('name', 'text')
        .addColumn('role', 'text', (column) => column.notNull())
        .addColumn('prefix', 'text', (column) => column.notNull())
        .addColumn('hash', 'text', (column) => column.notNull().unique())
        .addColumn('disabled', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (column) => column.notNull())
        .addCheckConstraint('admin_tokens_role_known', sql`role in ('owner', 'operator', 'viewer')`)
        .execute();
      await db.schema
        .createTable('audit_log')
        .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (column) =>
          engine === 'postgres' ? column.primaryKey() : column.primaryKey().autoIncrement(),
        )
        .addColumn('at', 'bigint', (column) => column.notNull())
        // Null for a change made through the CLI (whoever has the database URL).
        .addColumn('admin_token_id', 'text')
        .addColumn('action', 'text', (column) => column.notNull())
        .addColumn('target_type', 'text', (column) => column.notNull())
        .addColumn('target_id', 'text', (column) => column.notNull())
        .addColumn('before', 'text')
        .addColumn('after', 'text')
        .execute();
      await db.schema.createIndex('audit_log_target').on('audit_log').columns(['target_type', 'target_id']).execute();
    },
  };
}
