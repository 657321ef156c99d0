/**
 * Opens the store named by a database URL:
 * - `sqlite:PATH` — a file, relative to the working directory unless absolute (`sqlite:/var/x.db`);
 *   its folder is created. `sqlite::memory:` is a private in-memory database (tests).
 * - `postgres://…` or `postgresql://…` — a PostgreSQL connection pool.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Transact } from './hold-queries.js';
import { KyselyStore, type KyselyStoreParts } from './kysely-store.js';
import { migrateSqliteFile, migrateToLatest } from './migrations/migrate.js';
import type { Database } from './schema.js';
import type { Store } from './store.js';
import { createPostgresHoldBatchCommit } from './postgres/postgres-hold-batch.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { createSqliteRequestLogAppend } from './request-log-queries.js';
import { createSqliteHoldBatchCommit } from './sqlite/sqlite-hold-statements.js';
import { startSqliteCheckpointer, type SqliteCheckpointer } from './sqlite/sqlite-checkpointer.js';
import { openSqliteConnection, sqliteImmediateTransaction } from './sqlite/sqlite-database.js';

export interface OpenStoreOptions {
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
  /** The clock for `created_at` columns (default: the system clock). */
  now?: () => Date;
  /** Told the size of every committed batch of holds, settlements and checkpoints (a metric, tests). */
  onHoldCommit?: (operations: number) => void;
  /**
   * Who checkpoints a SQLite file's WAL (`:memory:` and PostgreSQL have none to checkpoint):
   * - `commit` (the default): SQLite itself, inside the COMMIT that takes the WAL past 1,000 pages,
   *   on the event loop; right for the CLI and tests, which write little.
   * - `thread`: a thread that this store starts and `close()` stops (sqlite-checkpointer.ts); this
   *   store's COMMITs keep SQLite's own checkpoint only as a far safety net.
   * - `elsewhere`: another store on the same file runs the thread (`serve`'s own, server/serve.ts);
   *   this store's COMMITs keep only the safety net.
   */
  walCheckpoints?: 'commit' | 'thread' | 'elsewhere';
  /** Told if the checkpoint thread fails once started (it has stopped; the safety net is left). */
  onCheckpointError?: (error: Error) => void;
}

const MEMORY_PATH = ':memory:';
/** PostgreSQL's type id for `int8`/`bigint`. */
const INT8_TYPE_ID = 20;

export type DatabaseLocation = { engine: 'sqlite'; filename: string } | { engine: 'postgres'; connectionString: string };

/** Reads a database URL, or throws an Error naming the forms that are accepted. */
export function parseDatabaseUrl(databaseUrl: string): DatabaseLocation {
  const url = databaseUrl.trim();
  if (/^postgres(ql)?:\/\//i.test(url)) return { engine: 'postgres', connectionString: url };
  if (/^sqlite:/i.test(url)) {
    // `sqlite://x.db` and `sqlite:///abs/x.db` are common spellings of the same thing.
    const path = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (path === MEMORY_PATH) return { engine: 'sqlite', filename: MEMORY_PATH };
    if (path === '') throw new Error(`database URL ${JSON.stringify(databaseUrl)} has no file path; use sqlite:PATH or sqlite::memory:`);
    return { engine: 'sqlite', filename: resolve(path) };
  }
  throw new Error(
    `unsupported database URL ${JSON.stringify(redactPassword(databaseUrl))}: use sqlite:PATH, sqlite::memory:, postgres://… or postgresql://…`,
  );
}

export async function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Promise<Store> {
  const location = parseDatabaseUrl(databaseUrl);
  const now = options.now ?? (() => new Date());
  const onHoldCommit = options.onHoldCommit;
  const store = location.engine === 'sqlite' ? await openSqliteStore(location.filename, now, options) : openPostgresStore(location.connectionString, now, onHoldCommit);
  if (options.migrate ?? true) {
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  return store;
}

async function openSqliteStore(filename: string, now: () => Date, options: OpenStoreOptions): Promise<KyselyStore> {
  const file = filename !== MEMORY_PATH;
  if (file) mkdirSync(dirname(filename), { recursive: true });
  const walCheckpoints = file ? (options.walCheckpoints ?? 'commit') : 'commit';
  const connection = openSqliteConnection(filename, { backgroundCheckpoints: walCheckpoints !== 'commit' });
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  const transact: Transact = (work) => sqliteImmediateTransaction(db, work);
  // An in-memory database is private to this connection, so there is no one to lock out.
  const migrate = file ? () => migrateSqliteFile(filename) : () => migrateToLatest(db, 'sqlite');
  // A store closed before its first query would otherwise leave the connection open (and usable).
  const afterClose = () => {
    if (connection.open) connection.close();
  };
  const commitHoldOperations = createSqliteHoldBatchCommit(db, connection);
  const sqlite = { commit: commitHoldOperations, appendRequestLog: createSqliteRequestLogAppend(db, connection) };
  const parts: KyselyStoreParts = { db, engine: 'sqlite', transact, migrate, now, afterClose, commitHoldOperations, onHoldCommit: options.onHoldCommit, sqlite };
  if (walCheckpoints !== 'thread') return new KyselyStore(parts);
  // The file exists and is in WAL mode now that this connection has opened it.
  const checkpointer = await startSqliteCheckpointer(filename, {
    onError: options.onCheckpointError ?? ((error) => process.emitWarning(error.message, { code: 'TOLLGATE_WAL_CHECKPOINTER' })),
  }).catch((error: unknown) => {
    connection.close();
    throw error;
  });
  return new CheckpointedSqliteStore(parts, checkpointer);
}

/** A SQLite file store with a WAL checkpoint thread, which its `close()` stops and waits for. */
class CheckpointedSqliteStore extends KyselyStore {
  constructor(
    parts: KyselyStoreParts,
    private readonly checkpointer: SqliteCheckpointer,
  ) {
    super(parts);
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      // After the store's connection: the thread's is then the last one, whose close checkpoints
      // what is left and removes the WAL file, off the event loop.
      await this.checkpointer.stop();
    }
  }
}

function openPostgresStore(connectionString: string, now: () => Date, onHoldCommit: OpenStoreOptions['onHoldCommit']): KyselyStore {
  const pool = new pg.Pool({
    connectionString,
    // Per pool rather than pg.types.setTypeParser, which would change every pg user in the process.
    types: {
      getTypeParser: ((typeId: number, format?: string) =>
        typeId === INT8_TYPE_ID && format !== 'binary'
          ? (text: string) => BigInt(text)
          : pg.types.getTypeParser(typeId, format === 'binary' ? 'binary' : 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its connection (a server restart, an administrator) is reported
  // here; without a listener Node would treat it as an uncaught error and end the process. The
  // pool has already dropped that client, and the next query opens a new one or fails on its own.
  pool.on('error', () => undefined);
  // A client checked out when its connection drops (between two statements of a transaction)
  // emits on itself, not on the pool; the statement in progress, or the next one, fails and its
  // error reaches the caller, so the event needs only a listener.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const transact: Transact = (work) => db.transaction().execute(work);
  // PostgresStore pipelines the hold batches itself; this plain form of the same commit is KyselyStore's.
  const commitHoldOperations = createPostgresHoldBatchCommit(db);
  return new PostgresStore({ db, transact, migrate: () => migrateToLatest(db, 'postgres'), now, commitHoldOperations, onHoldCommit });
}

function redactPassword(databaseUrl: string): string {
  return databaseUrl.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
