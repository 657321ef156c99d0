/**
 * WAL checkpoints of a SQLite file, run by a thread of their own (`worker_threads`) with its own
 * connection, so that no COMMIT on the event loop has to run one.
 *
 * Left to itself, SQLite checkpoints inside whichever COMMIT takes the WAL past
 * `wal_autocheckpoint` pages (1,000 by default): that COMMIT copies the WAL's pages into the
 * database and syncs both files, on the event loop, several times a second under load. Instead the
 * thread runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`: a passive checkpoint takes no
 * lock that a writer or a reader waits for. Once a checkpoint has copied every frame of the WAL,
 * the next writer starts the WAL over from its beginning by itself (SQLite's own rule), so the file
 * stays the size of the frames written between two complete checkpoints. Under steady writes a
 * checkpoint is rarely complete (frames arrive while it syncs), so when the WAL holds
 * `restartFrames` or more the thread runs up to `maxPassesPerTick` passes in a row: each copies
 * only what the previous one missed and is quicker, until one ends with nothing missed. When the
 * file has nonetheless grown past `truncateAboveBytes` (a long reader held the WAL, a burst), a
 * `TRUNCATE` checkpoint right after a complete pass gives the space back; it never waits (the
 * connection's busy timeout is 0), as a waiting TRUNCATE would hold back the writers.
 *
 * The connections that write keep SQLite's automatic checkpoint as a safety net at
 * `SQLITE_SAFETY_NET_AUTOCHECKPOINT_PAGES` (sqlite-database.ts): if the thread is gone or lags, the
 * WAL stays bounded the old way, with a longer stall. Checkpoints do not change durability: a
 * commit is in the WAL either way, and a checkpoint syncs the WAL before it copies from it
 * (docs/architecture.md, "Durability").
 *
 * The thread's code is a CommonJS script given to the Worker as a string (`eval`), so it runs
 * the same from `src/` under vitest as from the built `dist/`, with no file to find next to this
 * module; it loads the better-sqlite3 this module resolves.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface SqliteCheckpointerOptions {
  /** How often the thread checkpoints (default 250 ms). */
  intervalMs?: number;
  /** From this many WAL frames on, a tick makes several passes to complete a checkpoint (default 1,000). */
  restartFrames?: number;
  /** At most this many passive checkpoints per tick (default 4). */
  maxPassesPerTick?: number;
  /** A WAL file larger than this is truncated after a complete checkpoint (default 16 MiB). */
  truncateAboveBytes?: number;
  /** Told once if the thread fails after it started; it has then stopped, and the safety net is left. */
  onError?: (error: Error) => void;
}

export interface SqliteCheckpointer {
  /** Stops the thread and resolves once it has closed its connection and exited. Safe to call again. */
  stop(): Promise<void>;
  /** Whether the thread is still running. */
  readonly running: boolean;
}

const DEFAULT_INTERVAL_MS = 250;
const DEFAULT_RESTART_FRAMES = 1_000;
const DEFAULT_MAX_PASSES_PER_TICK = 4;
const DEFAULT_TRUNCATE_ABOVE_BYTES = 16 * 1024 * 1024;
/** A thread that does not end after being told to is terminated (a checkpoint in progress finishes first). */
const STOP_GRACE_MS = 10_000;

interface ThreadData {
  betterSqlite3: string;
  filename: string;
  intervalMs: number;
  restartFrames: number;
  maxPassesPerTick: number;
  truncateAboveBytes: number;
}

type ThreadMessage = { type: 'ready' } | { type: 'error'; message: string; code?: string };

/**
 * The thread. Opens the file (which must exist and be in WAL mode), says `ready`, then checkpoints
 * every `intervalMs` until told `stop` or until a checkpoint throws (it reports the error and
 * stops). `pragma wal_checkpoint` answers `busy` (another checkpoint was running, or TRUNCATE could
 * not take its locks at once), `log` (frames in the WAL) and `checkpointed` (frames copied).
 */
const THREAD_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.betterSqlite3);
const { filename, intervalMs, restartFrames, maxPassesPerTick, truncateAboveBytes } = workerData;
let db;
let timer;
const finish = () => {
  if (timer !== undefined) clearInterval(timer);
  timer = undefined;
  if (db !== undefined && db.open) db.close();
  parentPort.close();
};
const fail = (error) => {
  parentPort.postMessage({ type: 'error', message: String(error && error.message || error), code: error && error.code });
  try { finish(); } catch { parentPort.close(); }
};
const walBytes = () => {
  try { return statSync(filename + '-wal').size; } catch { return 0; }
};
const checkpoint = (mode) => db.pragma('wal_checkpoint(' + mode + ')')[0];
const complete = (result) => result.busy === 0 && result.log > 0 && result.checkpointed === result.log;
const tick = () => {
  try {
    let result = checkpoint('PASSIVE');
    for (let pass = 1; pass < maxPassesPerTick && result.log >= restartFrames && !complete(result); pass++) result = checkpoint('PASSIVE');
    if (complete(result) && walBytes() > truncateAboveBytes) checkpoint('TRUNCATE');
  } catch (error) {
    fail(error);
  }
};
parentPort.on('message', (message) => {
  if (message === 'stop') finish();
});
try {
  db = new Database(filename, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
  db.pragma('synchronous = NORMAL');
  timer = setInterval(tick, intervalMs);
  parentPort.postMessage({ type: 'ready' });
} catch (error) {
  fail(error);
}
`;

/**
 * Starts the checkpoint thread for the SQLite file `filename` (which must exist, in WAL mode), and
 * resolves once its connection is open. The thread does not keep the process alive; `stop()`
 * ends it.
 */
export async function startSqliteCheckpointer(filename: string, options: SqliteCheckpointerOptions = {}): Promise<SqliteCheckpointer> {
  const workerData: ThreadData = {
    betterSqlite3: createRequire(import.meta.url).resolve('better-sqlite3'),
    filename,
    intervalMs: options.intervalMs ?? DEFAULT_INTERVAL_MS,
    restartFrames: options.restartFrames ?? DEFAULT_RESTART_FRAMES,
    maxPassesPerTick: options.maxPassesPerTick ?? DEFAULT_MAX_PASSES_PER_TICK,
    truncateAboveBytes: options.truncateAboveBytes ?? DEFAULT_TRUNCATE_ABOVE_BYTES,
  };
  const worker = new Worker(THREAD_SOURCE, { eval: true, workerData, name: 'sqlite-checkpointer' });
  worker.unref();
  let running = true;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => {
    running = false;
    resolve();
  }));

  await new Promise<void>((resolve, reject) => {
    const onMessage = (message: ThreadMessage) => {
      if (message.type === 'ready') settle(resolve);
      else settle(() => reject(threadError(message, filename)));
    };
    const onError = (error: Error) => settle(() => reject(error));
    const onExit = () => settle(() => reject(new Error(`the WAL checkpoint thread for ${filename} ended before it started`)));
    const settle = (then: () => void) => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      then();
    };
    worker.on('message', onMessage).once('error', onError).once('exit', onExit);
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });

  let reported = false;
  const report = (error: Error) => {
    if (reported) return;
    reported = true;
    options.onError?.(error);
  };
  worker.on('message', (message: ThreadMessage) => {
    if (message.type === 'error') report(threadError(message, filename));
  });
  // An exception the thread did not catch; it has ended.
  worker.on('error', report);

  let stopping: Promise<void> | undefined;
  return {
    get running() {
      return running;
    },
    stop: () =>
      (stopping ??= (async () => {
        if (!running) return;
        worker.postMessage('stop');
        const grace = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
        grace.unref();
        await exited;
        clearTimeout(grace);
      })()),
  };
}

function threadError(message: Extract<ThreadMessage, { type: 'error' }>, filename: string): Error {
  const error = new Error(`WAL checkpoint thread for ${filename}: ${message.message}`) as Error & { code?: string };
  if (message.code !== undefined) error.code = message.code;
  return error;
}
