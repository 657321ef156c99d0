/**
 * The database engines an end-to-end suite runs on: SQLite always (a fresh file), PostgreSQL when
 * TOLLGATE_TEST_POSTGRES_URL is set (a fresh database per suite, dropped afterwards).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestDatabase {
  engine: 'sqlite' | 'postgres';
  url: string;
  drop(): Promise<void>;
}

export const postgresUrl = process.env.TOLLGATE_TEST_POSTGRES_URL;
export const redisUrl = process.env.TOLLGATE_TEST_REDIS_URL;

export const engines: Array<'sqlite' | 'postgres'> = postgresUrl ? ['sqlite', 'postgres'] : ['sqlite'];
if (!postgresUrl) console.info('PostgreSQL end-to-end runs skipped: set TOLLGATE_TEST_POSTGRES_URL to run them.');

export async function createTestDatabase(engine: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'tollgate-e2e-'));
    return { engine, url: `sqlite:${join(folder, 'tollgate.db')}`, drop: async () => rmSync(folder, { recursive: true, force: true }) };
  }
  if (!postgresUrl) throw new Error('TOLLGATE_TEST_POSTGRES_URL is not set');
  const name = `tg_e2e_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    engine,
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
