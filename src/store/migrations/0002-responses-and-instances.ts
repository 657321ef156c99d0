/**
 * Stored responses (Responses API `store`, `previous_response_id`, GET/DELETE) and the instance
 * heartbeat table. Plain types only, so the one definition serves both engines. Column meanings
 * are documented in ../schema.ts.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export function responsesAndInstancesMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('responses')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
        .addColumn('response', 'text', (column) => column.notNull())
        .addColumn('input_items', 'text', (column) => column.notNull())
        .addColumn('created_at', 'bigint', (column) => column.notNull())
        .execute();
      await db.schema.createIndex('responses_account_id').on('responses').column('account_id').execute();

      await db.schema
        .createTable('instances')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('shared_limits', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
        .addCheckConstraint('instances_shared_limits_flag', sql`shared_limits in (0, 1)`)
        .execute();
    },
  };
}
