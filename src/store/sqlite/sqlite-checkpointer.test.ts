/**
 * The WAL checkpoint thread on real files: it moves the WAL into the database without the writer's
 * COMMITs doing it, keeps the WAL from growing under steady writes, gives the file back when idle,
 * and leaves no thread behind once stopped (nor once a store that runs it is closed).
 */
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../open-store.js';
import { startSqliteCheckpointer } from './sqlite-checkpointer.js';
import { openSqliteConnection, SQLITE_SAFETY_NET_AUTOCHECKPOINT_PAGES, type SqliteConnection } from './sqlite-database.js';

const folders: string[] = [];
const connections: SqliteConnection[] = [];
function temporaryFile(): string {
  const folder = mkdtempSync(join(tmpdir(), 'tollgate-checkpointer-'));
  folders.push(folder);
  return join(folder, 'tollgate.db');
}
afterEach(() => {
  for (const connection of connections.splice(0)) if (connection.open) connection.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A writer as the request path's: WAL, `synchronous = NORMAL`, SQLite's own checkpoint only as a safety net. */
function openWriter(file: string): { connection: SqliteConnection; write: (pages: number) => void } {
  const connection = openSqliteConnection(file, { backgroundCheckpoints: true });
  connections.push(connection);
  connection.exec('create table if not exists filler (id integer primary key, body blob)');
  const insert = connection.prepare('insert into filler (body) values (?)');
  // A row of 3,000 bytes takes a page of its own (4 KiB pages), so each row adds about one WAL frame.
  const page = Buffer.alloc(3_000, 7);
  const write = connection.transaction((pages: number) => {
    for (let index = 0; index < pages; index++) insert.run(page);
  });
  return { connection, write: (pages) => write.immediate(pages) };
}

const walBytes = (file: string): number => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);

/** The WAL header's checkpoint sequence number, which SQLite increments each time the WAL starts over. */
function walRestarts(file: string): number {
  const header = Buffer.alloc(32);
  const descriptor = openSync(`${file}-wal`, 'r');
  try {
    readSync(descriptor, header, 0, 32, 0);
  } finally {
    closeSync(descriptor);
  }
  return header.readUInt32BE(12);
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(10);
  }
}

/** This process's threads (Linux); undefined elsewhere. */
function threadCount(): number | undefined {
  return existsSync('/proc/self/task') ? readdirSync('/proc/self/task').length : undefined;
}

describe('openSqliteConnection', () => {
  it('keeps SQLite’s automatic checkpoint, raised to the safety net when a thread checkpoints', () => {
    const file = temporaryFile();
    const plain = openSqliteConnection(file);
    const background = openSqliteConnection(file, { backgroundCheckpoints: true });
    connections.push(plain, background);
    expect(plain.pragma('wal_autocheckpoint', { simple: true })).toBe(1000n);
    expect(background.pragma('wal_autocheckpoint', { simple: true })).toBe(BigInt(SQLITE_SAFETY_NET_AUTOCHECKPOINT_PAGES));
  });
});

describe('the WAL checkpoint thread', () => {
  it('copies the WAL into the database and, once writes stop, truncates it', async () => {
    const file = temporaryFile();
    const { connection, write } = openWriter(file);
    write(1_500);
    // Beyond the default 1,000 pages, yet the writer's COMMIT has not checkpointed.
    expect(walBytes(file)).toBeGreaterThan(1_500 * 4_096);
    const databaseBefore = statSync(file).size;

    const checkpointer = await startSqliteCheckpointer(file, { intervalMs: 20, truncateWhenIdleMs: 200 });
    try {
      await waitFor(() => walBytes(file) === 0);
      expect(statSync(file).size).toBeGreaterThan(databaseBefore + 1_500 * 4_096);
      expect(connection.prepare('select count(*) from filler').pluck().get()).toBe(1_500n);
    } finally {
      await checkpointer.stop();
    }
  });

  // It times a thread against the writer: on a machine loaded by the rest of the suite the thread can
  // miss its turns for a while, so the run is tried again rather than the bound loosened.
  it('keeps the WAL short under steady writes (the writer starts it over after a complete pass)', { retry: 2 }, async () => {
    const file = temporaryFile();
    const { write } = openWriter(file);
    write(1);
    const restartsBefore = walRestarts(file);
    const checkpointer = await startSqliteCheckpointer(file, { intervalMs: 20, restartFrames: 100, truncateWhenIdleMs: 60_000 });
    let largest = 0;
    try {
      // 4,000 frames in batches of 10, one per event-loop turn or so, as group commits come.
      for (let batch = 0; batch < 400; batch++) {
        write(10);
        largest = Math.max(largest, walBytes(file));
        await sleep(1);
      }
    } finally {
      await checkpointer.stop();
    }
    // The writer's own checkpoint waits for 10,000 frames: only the thread's complete passes let it
    // start the WAL over, and without them the WAL would hold all 4,000 frames (about 16 MB).
    expect(walRestarts(file) - restartsBefore).toBeGreaterThanOrEqual(2);
    expect(largest, `${largest}`).toBeLessThan(3_000 * 4_120);
  });

  it('leaves no thread running once stopped, and stop() can be called again', async () => {
    const file = temporaryFile();
    openWriter(file);
    const before = threadCount();
    const checkpointer = await startSqliteCheckpointer(file);
    expect(checkpointer.running).toBe(true);
    if (before !== undefined) expect(threadCount()).toBeGreaterThan(before);
    await checkpointer.stop();
    await checkpointer.stop();
    expect(checkpointer.running).toBe(false);
    if (before !== undefined) expect(threadCount()).toBe(before);
  });

  it('fails to start, and leaves no thread, when the file does not exist', async () => {
    const file = temporaryFile();
    const before = threadCount();
    await expect(startSqliteCheckpointer(file)).rejects.toThrow(/WAL checkpoint thread/);
    expect(existsSync(file)).toBe(false);
    if (before !== undefined) await waitFor(() => threadCount() === before);
  });
});

describe('openStore with walCheckpoints', () => {
  it('runs the thread for a file store and stops it on close, store after store', async () => {
    const file = temporaryFile();
    // The first store's migration warms up what stays (the libuv pool, if any).
    await (await openStore(`sqlite:${file}`)).close();
    const before = threadCount();
    for (let round = 0; round < 5; round++) {
      const store = await openStore(`sqlite:${file}`, { walCheckpoints: 'thread' });
      if (before !== undefined) expect(threadCount()).toBeGreaterThan(before);
      await store.close();
      // The thread has been told to end and has ended its work; the OS lists it until it exits.
      if (before !== undefined) await waitFor(() => threadCount() === before);
    }
  });

  it('runs no thread for an in-memory database, nor for a store told another one checkpoints', async () => {
    const file = temporaryFile();
    await (await openStore(`sqlite:${file}`)).close();
    const before = threadCount();
    const memory = await openStore('sqlite::memory:', { walCheckpoints: 'thread' });
    const elsewhere = await openStore(`sqlite:${file}`, { walCheckpoints: 'elsewhere' });
    if (before !== undefined) expect(threadCount()).toBe(before);
    await memory.close();
    await elsewhere.close();
  });

  it('removes the WAL file on close, the thread’s connection being the last', async () => {
    const file = temporaryFile();
    const store = await openStore(`sqlite:${file}`, { walCheckpoints: 'thread' });
    await store.createAccount({ id: 'a', name: 'a', openingBalanceNanos: 5n });
    expect(existsSync(`${file}-wal`)).toBe(true);
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
  });
});
