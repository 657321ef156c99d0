import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, parseDatabaseUrl } from './open-store.js';

const folders: string[] = [];
function temporaryFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'tollgate-open-'));
  folders.push(folder);
  return folder;
}
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('parseDatabaseUrl', () => {
  it('reads sqlite paths relative to the working directory, absolute ones as given', () => {
    expect(parseDatabaseUrl('sqlite:data/tollgate.db')).toEqual({ engine: 'sqlite', filename: resolve('data/tollgate.db') });
    expect(parseDatabaseUrl('sqlite:/var/lib/tollgate.db')).toEqual({ engine: 'sqlite', filename: '/var/lib/tollgate.db' });
    expect(parseDatabaseUrl('sqlite://data/x.db')).toEqual({ engine: 'sqlite', filename: resolve('data/x.db') });
    expect(parseDatabaseUrl('sqlite:///var/x.db')).toEqual({ engine: 'sqlite', filename: '/var/x.db' });
    expect(parseDatabaseUrl('sqlite::memory:')).toEqual({ engine: 'sqlite', filename: ':memory:' });
  });

  it('passes postgres URLs through', () => {
    expect(parseDatabaseUrl('postgres://u@h:5432/db')).toEqual({ engine: 'postgres', connectionString: 'postgres://u@h:5432/db' });
    expect(parseDatabaseUrl('postgresql://u@h/db')).toEqual({ engine: 'postgres', connectionString: 'postgresql://u@h/db' });
  });

  it('refuses other schemes naming the accepted forms, without echoing a password', () => {
    expect(() => parseDatabaseUrl('mysql://root:hunter2@db/tollgate')).toThrow(/sqlite:PATH.*postgres:\/\//);
    expect(() => parseDatabaseUrl('mysql://root:hunter2@db/tollgate')).not.toThrow(/hunter2/);
    expect(() => parseDatabaseUrl('tollgate.db')).toThrow(/unsupported database URL/);
    expect(() => parseDatabaseUrl('sqlite:')).toThrow(/no file path/);
  });
});

describe('openStore on SQLite', () => {
  it('creates the parent folder and a WAL database with the schema', async () => {
    const file = join(temporaryFolder(), 'nested', 'deeper', 'tollgate.db');
    const store = await openStore(`sqlite:${file}`);
    expect(store.engine).toBe('sqlite');
    expect(await store.revision()).toBe(0);
    await store.close();
    expect(existsSync(file)).toBe(true);
    const raw = new BetterSqlite3(file, { readonly: true });
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      const tables = raw.prepare("select name from sqlite_master where type = 'table' order by name").pluck().all();
      expect(tables).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'holds', 'ledger', 'revision', 'kysely_migration']));
    } finally {
      raw.close();
    }
  });

  it('works in memory', async () => {
    const store = await openStore('sqlite::memory:');
    const account = await store.createAccount({ id: 'a', name: 'a', openingBalanceNanos: 3n });
    expect(account.balanceNanos).toBe(3n);
    await store.close();
  });

  it('leaves the schema alone with migrate: false until migrate() is called', async () => {
    const file = join(temporaryFolder(), 'tollgate.db');
    const store = await openStore(`sqlite:${file}`, { migrate: false });
    await expect(store.revision()).rejects.toThrow(/no such table/);
    await store.migrate();
    expect(await store.revision()).toBe(0);
    await store.close();
  });

  it('enforces foreign keys', async () => {
    const store = await openStore('sqlite::memory:');
    await expect(
      store.openHold({ id: 'h', accountId: 'missing', keyId: 'missing', requestId: 'r', model: 'm', amountNanos: 0n, expiresAt: new Date() }),
    ).resolves.toBe(false);
    await store.createAccount({ id: 'a', name: 'a', openingBalanceNanos: 10n });
    // The account exists but the key does not: the hold row violates its foreign key, and the
    // reservation made in the same transaction is rolled back with it.
    await expect(store.openHold({ id: 'h', accountId: 'a', keyId: 'missing', requestId: 'r', model: 'm', amountNanos: 4n, expiresAt: new Date() })).rejects.toThrow(
      /FOREIGN KEY/,
    );
    expect((await store.findAccount('a'))?.reservedNanos).toBe(0n);
    await store.close();
  });
});

describe('openStore on PostgreSQL', () => {
  it('fails clearly when the server cannot be reached, and releases the pool', async () => {
    // Port 1 on loopback refuses connections at once.
    await expect(openStore('postgres://nobody@127.0.0.1:1/none')).rejects.toThrow(/ECONNREFUSED|connect/);
  });
});

describe('closing', () => {
  it('a SQLite store closed before its first query is really closed', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tollgate-close-'));
    try {
      const store = await openStore(`sqlite:${join(folder, 'x.db')}`, { migrate: false });
      await store.close();
      await expect(store.listAccounts()).rejects.toThrow();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
