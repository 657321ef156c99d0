/**
 * The PostgreSQL + Redis setup of the benchmark's `tollgate-1-pg`: where the URLs come from, a
 * fresh database created for the run on the given server (and dropped when the run ends, however it
 * ends), and a check that Redis answers, so that a gateway which would silently fall back to
 * in-memory limits is reported as not available instead of measured.
 *
 * Run as a script, `BENCH_POSTGRES_SERVER_URL=<server URL> node bench/postgres.mjs drop <database>`
 * drops a database this module created (names are checked against its pattern); run.mjs calls it
 * synchronously from its exit handler.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';

const NAME_PATTERN = /^tg_bench_[0-9a-f]{12}$/;

/**
 * The URLs to use: the flags first, then TOLLGATE_BENCH_POSTGRES_URL / TOLLGATE_BENCH_REDIS_URL,
 * then the test suite's TOLLGATE_TEST_POSTGRES_URL / TOLLGATE_TEST_REDIS_URL. Returns
 * `{ postgresUrl, redisUrl }` or `{ missing: reason }`.
 */
export function postgresSetup(flags, env = process.env) {
  const pick = (flag, ...names) => [flag, ...names.map((name) => env[name])].find((value) => value !== undefined && value !== '');
  const postgresUrl = pick(flags['postgres-url'], 'TOLLGATE_BENCH_POSTGRES_URL', 'TOLLGATE_TEST_POSTGRES_URL');
  const redisUrl = pick(flags['redis-url'], 'TOLLGATE_BENCH_REDIS_URL', 'TOLLGATE_TEST_REDIS_URL');
  const missing = [
    postgresUrl === undefined ? 'no PostgreSQL URL (--postgres-url, TOLLGATE_BENCH_POSTGRES_URL or TOLLGATE_TEST_POSTGRES_URL)' : undefined,
    redisUrl === undefined ? 'no Redis URL (--redis-url, TOLLGATE_BENCH_REDIS_URL or TOLLGATE_TEST_REDIS_URL)' : undefined,
  ].filter((reason) => reason !== undefined);
  return missing.length > 0 ? { missing: missing.join('; ') } : { postgresUrl, redisUrl };
}

/** Creates `tg_bench_<random>` on the server of `serverUrl`; resolves with `{ name, url }`. */
export async function createBenchDatabase(serverUrl) {
  const name = `tg_bench_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

/** Drops a database made by createBenchDatabase, synchronously (in a child process), so that an exit handler can call it. */
export function dropBenchDatabaseSync(serverUrl, name) {
  // The URL goes by the environment, not the command line, where `ps` would show its password.
  execFileSync(process.execPath, [fileURLToPath(import.meta.url), 'drop', name], { env: { ...process.env, BENCH_POSTGRES_SERVER_URL: serverUrl }, stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
}

async function dropBenchDatabase(serverUrl, name) {
  if (!NAME_PATTERN.test(name)) throw new Error(`refusing to drop ${name}: not a benchmark database`);
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Resolves when Redis at `url` answers PING within `timeoutMs`; rejects otherwise. */
export async function checkRedis(url, timeoutMs = 3_000) {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } finally {
    client.disconnect();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [command, name] = process.argv.slice(2);
  const serverUrl = process.env.BENCH_POSTGRES_SERVER_URL;
  if (command !== 'drop' || serverUrl === undefined || name === undefined) {
    process.stderr.write('usage: BENCH_POSTGRES_SERVER_URL=<server URL> node bench/postgres.mjs drop <database>\n');
    process.exit(2);
  }
  dropBenchDatabase(serverUrl, name).catch((error) => {
    process.stderr.write(`dropping ${name}: ${error.message}\n`);
    process.exit(1);
  });
}
