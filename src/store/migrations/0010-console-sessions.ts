/**
 * Console sessions (docs/architecture.md, Operators): the web console exchanges an admin token or
 * an API key for a session cookie. Only the SHA-256 of the session id is kept, with who it stands
 * for (`kind` admin or key, and the admin token's or key's id) and when it ends, so every instance
 * honours a session another one opened, and a logout anywhere ends it everywhere.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export function consoleSessionsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('console_sessions')
        .addColumn('hash', 'text', (column) => column.primaryKey())
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('subject_id', 'text', (column) => column.notNull())
        .addColumn('created_at', 'bigint', (column) => column.notNull())
        .addColumn('expires_at', 'bigint', (column) => column.notNull())
        .addCheckConstraint('console_sessions_kind_known', sql`kind in ('admin', 'key')`)
        .execute();
      await db.schema.createIndex('console_sessions_expiry').on('console_sessions').column('expires_at').execute();
    },
  };
}
