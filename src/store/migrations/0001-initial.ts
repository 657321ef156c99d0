/**
 * The first schema: accounts, API keys, holds, the append-only ledger and the one-row revision
 * counter. Identical on both engines except the ledger's auto-increment key, which each spells its
 * own way. Column meanings are documented in ../schema.ts.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

export function initialMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('name', 'text', (column) => column.notNull().unique())
        .addColumn('balance_nanos', 'bigint', (column) => column.notNull())
        .addColumn('reserved_nanos', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('disabled', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (column) => column.notNull())
        .addCheckConstraint('accounts_reserved_not_negative', sql`reserved_nanos >= 0`)
        .addCheckConstraint('accounts_disabled_flag', sql`disabled in (0, 1)`)
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
        .addColumn('name', 'text')
        .addColumn('prefix', 'text', (column) => column.notNull())
        .addColumn('hash', 'text', (column) => column.notNull().unique())
        .addColumn('models', 'text')
        .addColumn('requests_per_window', 'integer')
        .addColumn('tokens_per_minute', 'integer')
        .addColumn('expires_at', 'bigint')
        .addColumn('disabled', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (column) => column.notNull())
        .addCheckConstraint('api_keys_disabled_flag', sql`disabled in (0, 1)`)
        .execute();
      await db.schema.createIndex('api_keys_account_id').on('api_keys').column('account_id').execute();
      await db.schema.createIndex('api_keys_prefix').on('api_keys').column('prefix').execute();

      await db.schema
        .createTable('holds')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
        .addColumn('key_id', 'text', (column) => column.notNull().references('api_keys.id'))
        .addColumn('request_id', 'text', (column) => column.notNull())
        .addColumn('amount_nanos', 'bigint', (column) => column.notNull())
        .addColumn('state', 'text', (column) => column.notNull())
        .addColumn('expires_at', 'bigint', (column) => column.notNull())
        .addColumn('created_at', 'bigint', (column) => column.notNull())
        .addCheckConstraint('holds_amount_not_negative', sql`amount_nanos >= 0`)
        .addCheckConstraint('holds_state_known', sql`state in ('open', 'settled', 'expired')`)
        .execute();
      await db.schema.createIndex('holds_state_expires_at').on('holds').columns(['state', 'expires_at']).execute();

      await db.schema
        .createTable('ledger')
        .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (column) =>
          engine === 'postgres' ? column.primaryKey() : column.primaryKey().autoIncrement(),
        )
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
        .addCheckConstraint('ledger_amount_not_negative', sql`amount_nanos >= 0`)
        .addCheckConstraint('ledger_kind_known', sql`kind in ('credit', 'charge')`)
        .execute();
      await db.schema.createIndex('ledger_account_id_created_at').on('ledger').columns(['account_id', 'created_at']).execute();

      await db.schema
        .createTable('revision')
        .addColumn('id', 'integer', (column) => column.primaryKey())
        .addColumn('value', 'bigint', (column) => column.notNull())
        .addCheckConstraint('revision_single_row', sql`id = 1`)
        .execute();
      await sql`insert into revision (id, value) values (1, 0)`.execute(db);
    },
  };
}
