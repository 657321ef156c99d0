/**
 * The admin API (docs/architecture.md): admin tokens (not API keys: their own table and prefix,
 * stored as SHA-256 hashes), the append-only audit log of every admin mutation, and the ledger's
 * `debit` kind (an operator's adjustment down, kept apart from charges so usage reports never
 * count it as a request).
 *
 * PostgreSQL swaps the kind constraint in place; SQLite cannot alter a CHECK constraint, so the
 * ledger is copied into a table with the new one, ids kept (as 0003 did).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

const KINDS = sql`kind in ('credit', 'charge', 'excess', 'debit')`;

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
      if (engine === 'postgres') {
        await sql`alter table ledger drop constraint ledger_kind_known`.execute(db);
        await sql`alter table ledger add constraint ledger_kind_known check (${KINDS})`.execute(db);
        return;
      }
      await db.schema
        .createTable('ledger_next')
        .addColumn('id', 'integer', (column) => column.primaryKey().autoIncrement())
        .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('amount_nanos', 'bigint', (column) => column.notNull())
        .addColumn('request_id', 'text')
        .addColumn('key_id', 'text', (column) => column.references('api_keys.id'))
        .addColumn('model', 'text')
        .addColumn('input_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('cached_input_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('output_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('reasoning_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('note', 'text')
        .addColumn('created_at', 'bigint', (column) => column.notNull())
        .addColumn('cache_write_input_tokens', 'integer', (column) => column.notNull().defaultTo(0))
        .addCheckConstraint('ledger_amount_not_negative', sql`amount_nanos >= 0`)
        .addCheckConstraint('ledger_kind_known', KINDS)
        .execute();
      await sql`insert into ledger_next (id, account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, note, created_at, cache_write_input_tokens)
        select id, account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, note, created_at, cache_write_input_tokens from ledger`.execute(db);
      await sql`drop table ledger`.execute(db);
      await sql`alter table ledger_next rename to ledger`.execute(db);
      await db.schema.createIndex('ledger_account_id_created_at').on('ledger').columns(['account_id', 'created_at']).execute();
    },
  };
}
