/**
 * Target rotations (docs/architecture.md, "Outages in sight"): one row each time a process takes a
 * target (or a whole provider) out of rotation, closed when that process sees it answer again.
 * Health is per process, so each row names the instance that saw it; an instance only ever closes
 * its own rows, and several instances write side by side without contention. Column meanings are
 * documented in ../schema.ts.
 */
import type { Kysely, Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

export function targetRotationsMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('target_rotations')
        .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (column) =>
          engine === 'postgres' ? column.primaryKey() : column.primaryKey().autoIncrement(),
        )
        .addColumn('target', 'text', (column) => column.notNull())
        .addColumn('scope', 'text', (column) => column.notNull())
        .addColumn('provider', 'text', (column) => column.notNull())
        .addColumn('instance', 'text', (column) => column.notNull())
        .addColumn('down_at', 'bigint', (column) => column.notNull())
        .addColumn('up_at', 'bigint')
        .addColumn('failure_kind', 'text')
        .addColumn('failure_status', 'integer')
        .addColumn('cooling_until', 'bigint')
        .execute();
      // The history reads newest first within a time range; closing finds an instance's open row.
      await db.schema.createIndex('target_rotations_down_at').on('target_rotations').columns(['down_at', 'id']).execute();
      await db.schema.createIndex('target_rotations_open').on('target_rotations').columns(['instance', 'target', 'up_at']).execute();
    },
  };
}
