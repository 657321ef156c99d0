/**
 * The catalog at runtime (docs/architecture.md, "The catalog at runtime"): every version of the
 * catalog document (providers and models) an operator put through the admin API, or the file
 * seeded, one row each. The newest row is the catalog every instance serves; a rollback appends a
 * copy of an older one, so the table is append-only and its highest id is the catalog's revision.
 * Upstream secrets entered through the API live beside the document, sealed (`secrets`: provider
 * name → sealed text), never inside it.
 */
import type { Kysely, Migration } from 'kysely';

export function catalogVersionsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('catalog_versions')
        .addColumn('id', 'bigint', (column) => column.primaryKey())
        .addColumn('document', 'text', (column) => column.notNull())
        .addColumn('secrets', 'text')
        .addColumn('note', 'text')
        .addColumn('admin_token_id', 'text')
        .addColumn('created_at', 'bigint', (column) => column.notNull())
        .execute();
    },
  };
}
