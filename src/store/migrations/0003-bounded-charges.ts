/**
 * Bounded charges (docs/architecture.md, Money): the ledger learns the `excess` kind (cost an
 * upstream reported beyond its hold, recorded for the operator and never debited) and the `debit`
 * kind (an operator's adjustment down, used by the admin API of 0005, kept apart from charges so
 * usage never counts it as a request); both in one rebuild of the ledger. Holds keep
 * the model and a checkpoint of the usage metered so far, so that a hold left by a crash settles
 * what was delivered instead of nothing.
 *
 * PostgreSQL swaps the kind constraint in place. SQLite cannot alter a CHECK constraint, so the
 * ledger is copied into a table with the new one (ids kept, so its order and AUTOINCREMENT stay).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

const KINDS = sql`kind in ('credit', 'charge', 'excess', 'debit')`;

export function boundedChargesMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('holds').addColumn('model', 'text').execute();
      await db.schema.alterTable('holds').addColumn('checkpoint_cost_nanos', 'bigint', (column) => column.notNull().defaultTo(0)).execute();
      for (const column of ['checkpoint_input_tokens', 'checkpoint_cached_input_tokens', 'checkpoint_output_tokens', 'checkpoint_reasoning_tokens']) {
        await db.schema.alterTable('holds').addColumn(column, 'integer', (definition) => definition.notNull().defaultTo(0)).execute();
      }
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
        .addCheckConstraint('ledger_amount_not_negative', sql`amount_nanos >= 0`)
        .addCheckConstraint('ledger_kind_known', KINDS)
        .execute();
      await sql`insert into ledger_next select id, account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, note, created_at from ledger`.execute(db);
      await sql`drop table ledger`.execute(db);
      await sql`alter table ledger_next rename to ledger`.execute(db);
      await db.schema.createIndex('ledger_account_id_created_at').on('ledger').columns(['account_id', 'created_at']).execute();
    },
  };
}
