/**
 * Alerts (docs/architecture.md, "Alerts"): a per-account low-balance threshold, the claims that
 * make a crossing fire once across every instance, and the outbox that webhook deliveries are
 * made from (at least once, across restarts). Column meanings are documented in ../schema.ts.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

export function alertsMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('accounts').addColumn('low_balance_threshold_nanos', 'bigint').execute();
      // The low-balance checker reads only accounts with a threshold, every few seconds.
      await db.schema
        .createIndex('accounts_low_balance_threshold')
        .on('accounts')
        .column('id')
        .where(sql<boolean>`low_balance_threshold_nanos is not null`)
        .execute();

      await db.schema
        .createTable('alert_claims')
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('subject_id', 'text', (column) => column.notNull())
        // '' for a condition without periods; a period's start for one that re-arms each period.
        .addColumn('scope', 'text', (column) => column.notNull().defaultTo(''))
        .addColumn('claimed_at', 'bigint', (column) => column.notNull())
        .addPrimaryKeyConstraint('alert_claims_pk', ['kind', 'subject_id', 'scope'])
        .execute();

      await db.schema
        .createTable('alert_outbox')
        .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (column) =>
          engine === 'postgres' ? column.primaryKey() : column.primaryKey().autoIncrement(),
        )
        .addColumn('event_id', 'text', (column) => column.notNull())
        .addColumn('event_type', 'text', (column) => column.notNull())
        .addColumn('webhook_id', 'text', (column) => column.notNull())
        .addColumn('body', 'text', (column) => column.notNull())
        .addColumn('state', 'text', (column) => column.notNull().defaultTo('pending'))
        .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'bigint', (column) => column.notNull())
        .addColumn('created_at', 'bigint', (column) => column.notNull())
        .addColumn('finished_at', 'bigint')
        .addColumn('last_error', 'text')
        .addUniqueConstraint('alert_outbox_event_webhook', ['event_id', 'webhook_id'])
        .addCheckConstraint('alert_outbox_state_known', sql`state in ('pending', 'delivered', 'abandoned')`)
        .execute();
      await db.schema.createIndex('alert_outbox_state_next_attempt_at').on('alert_outbox').columns(['state', 'next_attempt_at']).execute();
      await db.schema.createIndex('alert_outbox_created_at').on('alert_outbox').column('created_at').execute();
    },
  };
}
