/**
 * Runs the migrations with Kysely's Migrator from an in-code list (no files to find at run time,
 * so the compiled package needs nothing beside its .js files).
 *
 * Two processes may migrate the same database at once. PostgreSQL: the Migrator holds an advisory
 * lock while it reads and applies. SQLite: Kysely's SQLite adapter takes no lock (it assumes one
 * process), so a file database is migrated on a dedicated connection inside `BEGIN IMMEDIATE`,
 * which makes the whole check-then-apply a single writer's transaction; the second process waits
 * for it, then finds nothing left to do.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, Migrator, SqliteDialect, type Migration, type MigrationProvider } from 'kysely';
import type { StoreEngine } from '../schema.js';
import { openSqliteConnection, SQLITE_BUSY_TIMEOUT_MS, type SqliteConnection } from '../sqlite/sqlite-database.js';
import { initialMigration } from './0001-initial.js';
import { responsesAndInstancesMigration } from './0002-responses-and-instances.js';
import { boundedChargesMigration } from './0003-bounded-charges.js';
import { cacheWriteMigration } from './0004-cache-write.js';
import { adminMigration } from './0005-admin.js';
import { keyBudgetsMigration } from './0006-key-budgets.js';
import { requestLogMigration } from './0007-request-log.js';
import { holdBatchesMigration } from './0008-hold-batches.js';
import { alertsMigration } from './0009-alerts.js';
import { consoleSessionsMigration } from './0010-console-sessions.js';
import { setBasedHoldBatchesMigration } from './0011-set-based-hold-batches.js';
import { chargeSurfacesMigration } from './0012-charge-surfaces.js';
import { targetRotationsMigration } from './0013-target-rotations.js';
import { catalogVersionsMigration } from './0014-catalog-versions.js';
import { quotaSlicesMigration } from './0015-quota-slices.js';
import { indexOnlyFunctionsMigration } from './0016-index-only-functions.js';

/** Names sort in the order they apply. Never rename or edit one that has shipped; add a new one. */
function migrations(engine: StoreEngine): Record<string, Migration> {
  return {
    '0001-initial': initialMigration(engine),
    '0002-responses-and-instances': responsesAndInstancesMigration(),
    '0003-bounded-charges': boundedChargesMigration(engine),
    '0004-cache-write': cacheWriteMigration(),
    '0005-admin': adminMigration(engine),
    '0006-key-budgets': keyBudgetsMigration(engine),
    '0007-request-log': requestLogMigration(engine),
    '0008-hold-batches': holdBatchesMigration(engine),
    '0009-alerts': alertsMigration(engine),
    '0010-console-sessions': consoleSessionsMigration(),
    '0011-set-based-hold-batches': setBasedHoldBatchesMigration(engine),
    '0012-charge-surfaces': chargeSurfacesMigration(engine),
    '0013-target-rotations': targetRotationsMigration(engine),
    '0014-catalog-versions': catalogVersionsMigration(),
    '0015-quota-slices': quotaSlicesMigration(engine),
    '0016-index-only-functions': indexOnlyFunctionsMigration(engine),
  };
}

class InCodeMigrationProvider implements MigrationProvider {
  constructor(private readonly engine: StoreEngine) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations(this.engine);
  }
}

/** Applies every pending migration through `db`, or throws the first failure. */
export async function migrateToLatest<DB>(db: Kysely<DB>, engine: StoreEngine): Promise<void> {
  const migrator = new Migrator({ db, provider: new InCodeMigrationProvider(engine) });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    const which = failed === undefined ? '' : ` ${failed}`;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`database migration${which} failed: ${reason}`, { cause: error });
  }
}

/** How long a process waits for another one's migration before giving up. */
const SQLITE_MIGRATION_LOCK_TIMEOUT_MS = 60_000;
const SQLITE_LOCK_RETRY_MS = 20;

/** Migrates a SQLite file under a cross-process write lock (see the file comment). */
export async function migrateSqliteFile(filename: string): Promise<void> {
  const connection = openSqliteConnection(filename);
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: connection }) });
  try {
    await beginImmediateWithRetry(connection);
    try {
      await migrateToLatest(db, 'sqlite');
      connection.exec('COMMIT');
    } catch (error) {
      if (connection.inTransaction) connection.exec('ROLLBACK');
      throw error;
    }
  } finally {
    await db.destroy();
  }
}

/**
 * Polls for the write lock instead of leaning on the busy timeout: better-sqlite3 waits for the
 * timeout synchronously, which would also freeze a migration running elsewhere in this process.
 */
async function beginImmediateWithRetry(connection: SqliteConnection): Promise<void> {
  const deadline = Date.now() + SQLITE_MIGRATION_LOCK_TIMEOUT_MS;
  connection.pragma('busy_timeout = 0');
  try {
    for (;;) {
      try {
        connection.exec('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isSqliteBusy(error) || Date.now() > deadline) throw error;
      }
      await sleep(SQLITE_LOCK_RETRY_MS);
    }
  } finally {
    connection.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  }
}

function isSqliteBusy(error: unknown): boolean {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' && error.code.startsWith('SQLITE_BUSY');
}
