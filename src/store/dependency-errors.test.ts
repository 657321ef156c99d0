/**
 * Real driver errors, produced by real failures: pg against closed ports, silent and hanging-up
 * servers and (with TOLLGATE_TEST_POSTGRES_URL) a terminated backend; better-sqlite3 against a
 * locked file and a missing folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from './dependency-errors.js';

const postgresUrl = process.env.TOLLGATE_TEST_POSTGRES_URL;
if (!postgresUrl) console.info('Terminated-backend case skipped: set TOLLGATE_TEST_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/test) to run it.');

async function caught(work: () => Promise<unknown> | unknown): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

/** A TCP server on loopback that does `onConnection` with each socket. */
async function tcpServer(onConnection: (socket: Socket) => void): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function pgConnectError(config: pg.ClientConfig): Promise<unknown> {
  const client = new pg.Client(config);
  return caught(() => client.connect());
}

describe('isDatabaseUnavailable: PostgreSQL', () => {
  it('is true for a refused connection, by address and by host name', async () => {
    const byAddress = await pgConnectError({ host: '127.0.0.1', port: 1, user: 'x', database: 'x' });
    expect((byAddress as { code?: string }).code).toBe('ECONNREFUSED');
    expect(isDatabaseUnavailable(byAddress)).toBe(true);
    // `localhost` may resolve to ::1 and 127.0.0.1; Node then reports an AggregateError.
    expect(isDatabaseUnavailable(await pgConnectError({ host: 'localhost', port: 1, user: 'x', database: 'x' }))).toBe(true);
  });

  it('is true for a server that never answers (connection timeout) and one that hangs up', async () => {
    const silent = await tcpServer(() => {});
    const hangsUp = await tcpServer((socket) => socket.destroy());
    try {
      const timedOut = await pgConnectError({ host: '127.0.0.1', port: silent.port, connectionTimeoutMillis: 100, user: 'x', database: 'x' });
      expect(String(timedOut)).toMatch(/timeout/i);
      expect(isDatabaseUnavailable(timedOut)).toBe(true);
      const terminated = await pgConnectError({ host: '127.0.0.1', port: hangsUp.port, user: 'x', database: 'x' });
      expect(String(terminated)).toMatch(/Connection terminated/);
      expect(isDatabaseUnavailable(terminated)).toBe(true);
      const pool = new pg.Pool({ host: '127.0.0.1', port: silent.port, connectionTimeoutMillis: 100, user: 'x', database: 'x' });
      const fromPool = await caught(() => pool.query('select 1'));
      await pool.end();
      expect(isDatabaseUnavailable(fromPool)).toBe(true);
    } finally {
      await silent.close();
      await hangsUp.close();
    }
  });

  describe.skipIf(!postgresUrl)('on a real server', () => {
    const url = postgresUrl ?? '';
    let client: pg.Client;
    beforeAll(async () => {
      client = new pg.Client({ connectionString: url });
      await client.connect();
    });
    afterAll(async () => {
      await client.end();
    });

    it('is true when the server terminates the backend (57P01)', async () => {
      const victim = new pg.Client({ connectionString: url });
      await victim.connect();
      // The terminated connection also emits 'error'; unhandled, it would crash the test process.
      victim.on('error', () => undefined);
      const pid = (await victim.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const sleeping = caught(() => victim.query('select pg_sleep(10)'));
      await client.query('select pg_terminate_backend($1)', [pid]);
      const terminated = await sleeping;
      expect((terminated as { code?: string }).code).toBe('57P01');
      expect(isDatabaseUnavailable(terminated)).toBe(true);
      await victim.end().catch(() => undefined);
    });

    it('is false for errors of the query, not the server', async () => {
      expect(isDatabaseUnavailable(await caught(() => client.query('selec 1')))).toBe(false);
      expect(isDatabaseUnavailable(await caught(() => client.query('select 1/0')))).toBe(false);
      await client.query('create temporary table unique_things (id int primary key)');
      await client.query('insert into unique_things values (1)');
      const duplicate = await caught(() => client.query('insert into unique_things values (1)'));
      expect((duplicate as { code?: string }).code).toBe('23505');
      expect(isDatabaseUnavailable(duplicate)).toBe(false);
    });
  });
});

describe('isDatabaseUnavailable: SQLite', () => {
  const folder = mkdtempSync(join(tmpdir(), 'tollgate-dependency-errors-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('is true when another connection holds the write lock past the busy timeout', () => {
    const file = join(folder, 'locked.db');
    const holder = new BetterSqlite3(file);
    const waiter = new BetterSqlite3(file, { timeout: 0 });
    try {
      holder.exec('create table things (id integer primary key)');
      holder.exec('begin immediate');
      holder.exec('insert into things values (1)');
      const busy = (() => {
        try {
          waiter.exec('insert into things values (2)');
        } catch (error) {
          return error;
        }
        throw new Error('expected SQLITE_BUSY');
      })();
      expect((busy as { code?: string }).code).toBe('SQLITE_BUSY');
      expect(isDatabaseUnavailable(busy)).toBe(true);
    } finally {
      holder.close();
      waiter.close();
    }
  });

  it('is true when the file cannot be opened, and for I/O errors', () => {
    let cannotOpen: unknown;
    try {
      // A folder where the database file should be.
      new BetterSqlite3(folder);
    } catch (error) {
      cannotOpen = error;
    }
    expect((cannotOpen as { code?: string }).code).toBe('SQLITE_CANTOPEN');
    expect(isDatabaseUnavailable(cannotOpen)).toBe(true);
    // A failing disk cannot be staged here; the driver's own error class, with SQLite's extended code.
    expect(isDatabaseUnavailable(new BetterSqlite3.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE'))).toBe(true);
  });

  it('is false for constraint and syntax errors', () => {
    const connection = new BetterSqlite3(':memory:');
    try {
      connection.exec('create table things (id integer primary key)');
      connection.exec('insert into things values (1)');
      const duplicate = (() => {
        try {
          connection.exec('insert into things values (1)');
        } catch (error) {
          return error;
        }
        throw new Error('expected a constraint error');
      })();
      expect((duplicate as { code?: string }).code).toMatch(/^SQLITE_CONSTRAINT/);
      expect(isDatabaseUnavailable(duplicate)).toBe(false);
      let syntax: unknown;
      try {
        connection.exec('selec 1');
      } catch (error) {
        syntax = error;
      }
      expect(isDatabaseUnavailable(syntax)).toBe(false);
    } finally {
      connection.close();
    }
  });
});

describe('isDatabaseUnavailable: anything else', () => {
  it('follows causes but not forever, and refuses what is not an error', async () => {
    const refused = await pgConnectError({ host: '127.0.0.1', port: 1, user: 'x', database: 'x' });
    expect(isDatabaseUnavailable(new Error('settling failed', { cause: refused }))).toBe(true);
    const looping = new Error('loops');
    (looping as { cause?: unknown }).cause = looping;
    expect(isDatabaseUnavailable(looping)).toBe(false);
    for (const value of [undefined, null, 'ECONNREFUSED', 42, { code: 42 }, new Error('Connection terminated', { cause: 1 }), new TypeError('x is undefined')]) {
      // The message alone only counts for pg's code-less errors: a plain Error with that text is pg's.
      const expected = value instanceof Error && value.message.startsWith('Connection terminated');
      expect(isDatabaseUnavailable(value)).toBe(expected);
    }
  });
});
