/**
 * The SQLite engine (engine.ts): one better-sqlite3 connection under Kysely, write transactions
 * that take the write lock up front, and the request path's writes through statements prepared
 * once: opens, settles and checkpoints of holds group-committed (sqlite-hold-statements.ts) together
 * with stored responses' saves, which share those batches' transactions, and request-log batches
 * (sqlite-request-log.ts). A file may have a WAL checkpoint thread (sqlite-checkpointer.ts), stopped
 * after the connection on close.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import { SQLITE_MEMORY_PATH, type Engine, type EngineOptions, type Transact } from '../engine.js';
import { GroupCommit } from '../group-commit.js';
import { MAX_HOLD_BATCH_SIZE } from '../hold-operations.js';
import { migrateSqliteFile, migrateToLatest } from '../migrations/migrate.js';
import { responseRow } from '../queries/response-queries.js';
import type { Database } from '../schema.js';
import type { StoredResponse } from '../store.js';
import { startSqliteCheckpointer, type SqliteCheckpointer } from './sqlite-checkpointer.js';
import { openSqliteConnection, sqliteImmediateTransaction } from './sqlite-database.js';
import { createSqliteHoldBatchCommit, type SqliteBatchOperation } from './sqlite-hold-statements.js';
import { createSqliteRequestLogAppend } from './sqlite-request-log.js';

export interface SqliteEngineOptions extends EngineOptions {
  /** Who checkpoints the WAL of a file (open-store.ts, `walCheckpoints`); `:memory:` has none. */
  walCheckpoints?: 'commit' | 'thread' | 'elsewhere';
  /** Told if the checkpoint thread fails once started. */
  onCheckpointError?: (error: Error) => void;
}

/** Opens a SQLite file (its folder created) or `:memory:`, and starts its checkpoint thread if asked. */
export async function openSqliteEngine(filename: string, options: SqliteEngineOptions): Promise<Engine> {
  const file = filename !== SQLITE_MEMORY_PATH;
  if (file) mkdirSync(dirname(filename), { recursive: true });
  const walCheckpoints = file ? (options.walCheckpoints ?? 'commit') : 'commit';
  const connection = openSqliteConnection(filename, { backgroundCheckpoints: walCheckpoints !== 'commit' });
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  const transact: Transact = (work) => sqliteImmediateTransaction(db, work);
  // An in-memory database is private to this connection, so there is no one to lock out.
  const migrate = file ? () => migrateSqliteFile(filename) : () => migrateToLatest(db, 'sqlite');
  let checkpointer: SqliteCheckpointer | undefined;
  if (walCheckpoints === 'thread') {
    // The file exists and is in WAL mode now that this connection has opened it.
    checkpointer = await startSqliteCheckpointer(filename, {
      onError: options.onCheckpointError ?? ((error) => process.emitWarning(error.message, { code: 'TOLLGATE_WAL_CHECKPOINTER' })),
    }).catch((error: unknown) => {
      connection.close();
      throw error;
    });
  }

  const commit = createSqliteHoldBatchCommit(db, connection);
  const onHoldCommit = options.onHoldCommit;
  // Told the hold operations of each batch, saves left out; batches commit one at a time, so
  // the count is still the batch's own when GroupCommit reports it.
  let holdOperations = 0;
  /** Opens, settles and checkpoints, and stored responses' saves, in the same batches. */
  const queue = new GroupCommit<SqliteBatchOperation, boolean>({
    commit: (operations) => {
      holdOperations = operations.reduce((count, operation) => (operation.kind === 'save-response' ? count : count + 1), 0);
      return commit(operations);
    },
    maxBatchSize: MAX_HOLD_BATCH_SIZE,
    onCommit:
      onHoldCommit === undefined
        ? undefined
        : () => {
            if (holdOperations > 0) onHoldCommit(holdOperations);
          },
  });

  return {
    name: 'sqlite',
    db,
    transact,
    holds: queue,
    migrate,
    async saveResponse(response: StoredResponse): Promise<void> {
      // Checked and encoded here, so a bad response fails its own call only; the write goes with the
      // next hold batch and resolves once that has committed (sqlite-hold-statements.ts).
      await queue.submit({ kind: 'save-response', row: responseRow(response) });
    },
    appendRequestLog: createSqliteRequestLogAppend(db, connection),
    async close(): Promise<void> {
      try {
        // What requests queued is written before the connection goes; nothing new is taken.
        await queue.close();
        await db.destroy();
        // A store closed before its first query would otherwise leave the connection open (and usable).
        if (connection.open) connection.close();
      } finally {
        // After the store's connection: the thread's is then the last one, whose close checkpoints
        // what is left and removes the WAL file, off the event loop.
        if (checkpointer !== undefined) await checkpointer.stop();
      }
    },
  };
}
