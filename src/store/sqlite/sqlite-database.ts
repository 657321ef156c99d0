/**
 * SQLite specifics that Kysely does not cover: opening a connection with the pragmas Tollgate
 * relies on, and write transactions that take the write lock up front.
 */
import BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';

/** How long a connection waits for another process's write lock before failing. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/**
 * `wal_autocheckpoint` of a connection whose WAL a checkpoint thread looks after
 * (sqlite-checkpointer.ts): far above what the thread lets the WAL reach, so that SQLite's own
 * checkpoint, which runs inside a COMMIT on the event loop, happens only if the thread is gone or
 * lags (about 40 MB of WAL with 4 KiB pages), instead of every 1,000 pages.
 */
export const SQLITE_SAFETY_NET_AUTOCHECKPOINT_PAGES = 10_000;

export type SqliteConnection = BetterSqlite3.Database;

export interface SqliteConnectionOptions {
  /**
   * A checkpoint thread looks after this file's WAL: keep SQLite's automatic checkpoint only as a
   * safety net (`SQLITE_SAFETY_NET_AUTOCHECKPOINT_PAGES`). Default false: every 1,000 pages.
   */
  backgroundCheckpoints?: boolean;
}

/**
 * Opens `filename` (or `:memory:`) with WAL (readers never block the writer), a busy timeout (a
 * second process waits instead of failing), foreign keys on, and 64-bit integers returned as bigint
 * so money above 2^53 nanos is never rounded. With `synchronous = NORMAL` a commit is not synced on
 * its own: it survives the process dying, not a power loss (docs/architecture.md, "Durability").
 */
export function openSqliteConnection(filename: string, options: SqliteConnectionOptions = {}): SqliteConnection {
  const connection = new BetterSqlite3(filename);
  try {
    // The busy timeout first, so that switching a new file to WAL waits for a concurrent opener.
    connection.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    connection.pragma('journal_mode = WAL');
    connection.pragma('synchronous = NORMAL');
    if (options.backgroundCheckpoints === true) connection.pragma(`wal_autocheckpoint = ${SQLITE_SAFETY_NET_AUTOCHECKPOINT_PAGES}`);
    connection.pragma('foreign_keys = ON');
    connection.defaultSafeIntegers(true);
  } catch (error) {
    connection.close();
    throw error;
  }
  return connection;
}

/**
 * Runs `work` in a `BEGIN IMMEDIATE` transaction. Kysely's own transactions use a deferred
 * `BEGIN`, which in WAL mode can fail with SQLITE_BUSY_SNAPSHOT (without waiting) when another
 * process writes between our first read and our first write; taking the write lock at BEGIN makes
 * the busy timeout apply instead. Kysely gives SQLite a single connection behind a mutex, so the
 * bound `connection` below excludes every other query of this process until we commit.
 */
export async function sqliteImmediateTransaction<DB, T>(db: Kysely<DB>, work: (transaction: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const result = await work(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      // Also after a failed COMMIT, which leaves the transaction open; when none is open the
      // rollback's own error says so and is irrelevant next to the original one.
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}
