/**
 * Opens the store named by a database URL:
 * - `sqlite:PATH` — a file, relative to the working directory unless absolute (`sqlite:/var/x.db`);
 *   its folder is created. `sqlite::memory:` is a private in-memory database (tests).
 * - `postgres://…` or `postgresql://…` — a PostgreSQL connection pool.
 */
import { resolve } from 'node:path';
import { SQLITE_MEMORY_PATH, type Engine } from './engine.js';
import { KyselyStore } from './kysely-store.js';
import type { Store } from './store.js';

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

const MEMORY_PATH = SQLITE_MEMORY_PATH;

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
  // Only the engine the URL names is loaded: a SQLite gateway never loads pg, nor PostgreSQL's
  // better-sqlite3 (docs/architecture.md, "What a process loads").
  const engine: Engine =
    location.engine === 'sqlite'
      ? await (await import('./sqlite/sqlite-engine.js')).openSqliteEngine(location.filename, options)
      : (await import('./postgres/postgres-engine.js')).openPostgresEngine(location.connectionString, { onHoldCommit: options.onHoldCommit });
  const store = new KyselyStore(engine, { now });
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

function redactPassword(databaseUrl: string): string {
  return databaseUrl.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
