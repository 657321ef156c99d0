/**
 * WAL checkpoints of a SQLite file, run by a thread of their own (`worker_threads`) with its own
 * connection, so that no COMMIT on the event loop has to run one.
 *
 * Left to itself, SQLite checkpoints inside whichever COMMIT takes the WAL past
 * `wal_autocheckpoint` pages (1,000 by default): that COMMIT copies the WAL's pages into the
 * database and syncs both files, on the event loop, several times a second under load. Instead the
 * thread runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`. A passive checkpoint takes no
 * lock that a writer or a reader waits for. The WAL file is not made shorter by a checkpoint: it
 * starts over from its beginning when a writer begins while every frame is in the database (SQLite
 * does that by itself, at the cost of one sync of the WAL header). Under steady writes that moment
 * does not come by itself, as frames arrive while a checkpoint syncs; so once the WAL holds
 * `restartFrames` the thread runs passes in a row, each copying only what the one before missed and
 * so quicker, until one leaves nothing behind (for at most `intervalMs`, then again next tick).
 * After `truncateWhenIdleMs` without a write, a `TRUNCATE` checkpoint gives the file's space back.
 * The thread never runs RESTART or TRUNCATE under load: they hold the write lock while they copy,
 * and a writer that finds it taken sleeps on the event loop (SQLite's busy handler), which is the
 * stall this module exists to avoid; its busy timeout is 0, so it never waits for a lock either.
 *
 * The connections that write keep SQLite's automatic checkpoint as a safety net at
 * `SQLITE_SAFETY_NET_AUTOCHECKPOINT_PAGES` (sqlite-database.ts): if the thread is gone or lags, the
 * WAL stays bounded the old way, with a longer stall. Checkpoints do not change durability: a
 * commit is in the WAL either way, and a checkpoint syncs the WAL before it copies from it and the
 * database before the WAL may start over (docs/architecture.md, "Durability").
 *
 * The thread's code is a CommonJS script given to the Worker as a string (`eval`), so it runs
 * the same from `src/` under vitest as from the built `dist/`, with no file to find next to this
 * module; it loads the better-sqlite3 that this module resolves.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface SqliteCheckpointerOptions {
  /** How often the thread checkpoints (default 250 ms). */
  intervalMs?: number;
  /** From this many WAL frames on, a tick makes passes until one leaves nothing behind (default 2,000, about 8 MB). */
  restartFrames?: number;
  /** After this long without a write, the WAL file is truncated to nothing (default 5 s). */
  truncateWhenIdleMs?: number;
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
const DEFAULT_RESTART_FRAMES = 2_000;
const DEFAULT_TRUNCATE_WHEN_IDLE_MS = 5_000;
/** How long a pass that found nothing new waits for a transaction begun before it to commit. */
const SETTLE_MS = 2;
/** A thread that does not end after being told to is terminated (a checkpoint in progress finishes first). */
const STOP_GRACE_MS = 10_000;

interface ThreadData {
  betterSqlite3: string;
  filename: string;
  intervalMs: number;
  restartFrames: number;
  settleMs: number;
  truncateWhenIdleMs: number;
}

type ThreadMessage = { type: 'ready' } | { type: 'error'; message: string; code?: string };

/**
 * The thread. Opens the file (which must exist and be in WAL mode), says `ready`, then checkpoints
 * every `intervalMs` until told `stop` or until a checkpoint throws (it reports the error and
 * stops). `pragma wal_checkpoint` answers `busy` (another checkpoint was running, or TRUNCATE could
 * not take its locks at once), `log` (the frames in the WAL when the checkpoint began) and
 * `checkpointed` (of those, the frames now in the database). Frames committed during a pass are in
 * neither count, so a pass is known to have left nothing behind only when the next pass finds no
 * more frames than it did (or fewer: a writer has started the WAL over). Even then a transaction
 * that began before the WAL was all copied will append instead of starting it over when it
 * commits; so the thread waits `settleMs` and looks once more: fewer frames (started over) or the
 * same (no writer yet, and the next one will start it over) end the tick, more start the passes again.
 */
const THREAD_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlite3);
const { filename, intervalMs, restartFrames, settleMs, truncateWhenIdleMs } = workerData;
let db;
let timer;
let lastLog = -1;
const pause = new Int32Array(new SharedArrayBuffer(4));
let idleSince = Date.now();
const finish = () => {
  if (timer !== undefined) clearInterval(timer);
  timer = undefined;
  if (db !== undefined && db.open) db.close();
  parentPort.close();
};
const fail = (error) => {
  parentPort.postMessage({ type: 'error', message: String((error && error.message) || error), code: error && error.code });
  try { finish(); } catch { parentPort.close(); }
};
const checkpoint = (mode) => db.pragma('wal_checkpoint(' + mode + ')')[0];
const tick = () => {
  try {
    const started = Date.now();
    let result = checkpoint('PASSIVE');
    let quiet = 0;
    while (result.busy === 0 && result.log >= restartFrames && Date.now() - started < intervalMs) {
      const next = checkpoint('PASSIVE');
      const restarted = next.log < result.log;
      quiet = next.log === result.log ? quiet + 1 : 0;
      result = next;
      if (restarted || quiet === 2) break;
      if (quiet === 1) Atomics.wait(pause, 0, 0, settleMs);
    }
    const now = Date.now();
    if (result.log !== lastLog) idleSince = now;
    lastLog = result.log;
    if (result.busy === 0 && result.log > 0 && result.checkpointed === result.log && now - idleSince >= truncateWhenIdleMs) {
      lastLog = checkpoint('TRUNCATE').log;
    }
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
    settleMs: SETTLE_MS,
    truncateWhenIdleMs: options.truncateWhenIdleMs ?? DEFAULT_TRUNCATE_WHEN_IDLE_MS,
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
        // Kept alive until it has ended: a process with nothing else left to do (a refused start)
        // would otherwise exit while this is awaited, with its last checkpoint unfinished.
        worker.ref();
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
