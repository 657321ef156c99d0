/**
 * Several serving processes of the built gateway on one database, the two ways the scale suites
 * run them: three instances on one PostgreSQL and Redis, and `serve --workers 2` on SQLite. Each
 * suite runs once per setup (`SCALE_SETUPS`), with `startScaleCluster` in its beforeAll: the
 * database, a store on it, an upstream double that bills as `hostileUsage` says, and the processes.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Agent } from 'undici';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { testCatalog } from './catalog.js';
import { createTestDatabase, postgresUrl, redisUrl, type TestDatabase } from './databases.js';
import { startGatewayProcess, writeCatalog, type GatewayProcess } from './gateway-process.js';
import { hostileUsage } from './hostile-usage.js';
import { startOpenAIUpstream, type UpstreamDouble } from './openai-upstream.js';
import { waitFor } from './wait-for.js';

const run = promisify(execFile);

export interface ScaleSetup {
  name: string;
  enabled: boolean;
  skipReason: string;
  engine: 'sqlite' | 'postgres';
  extraEnv: Record<string, string>;
  /** Starts the processes (one primary with its workers counts as one here). */
  start(env: Record<string, string>): Promise<GatewayProcess[]>;
  /** How many processes serve: the instances, or the workers of the one primary. */
  servers: number;
  /** kill -9 of the serving processes of `victim` (for workers: the workers, which the primary replaces). */
  kill(victim: GatewayProcess): Promise<void>;
}

export const SCALE_SETUPS: readonly ScaleSetup[] = [
  {
    name: 'three instances on PostgreSQL and Redis',
    enabled: Boolean(postgresUrl && redisUrl),
    skipReason: 'set TOLLGATE_TEST_POSTGRES_URL and TOLLGATE_TEST_REDIS_URL to run it',
    engine: 'postgres',
    extraEnv: redisUrl ? { TOLLGATE_REDIS_URL: redisUrl } : {},
    start: (env) => Promise.all([0, 1, 2].map(() => startGatewayProcess(env))),
    servers: 3,
    kill: (victim) => victim.kill(),
  },
  {
    name: 'serve --workers 2 on SQLite',
    enabled: true,
    skipReason: '',
    engine: 'sqlite',
    extraEnv: {},
    start: async (env) => [await startGatewayProcess(env, ['--workers', '2'])],
    servers: 2,
    kill: async (victim) => {
      await run('pkill', ['-KILL', '-P', String(victim.child.pid)]).catch(() => undefined);
    },
  },
];

export interface ScaleCluster {
  database: TestDatabase;
  store: Store;
  /** The processes' environment (database, catalog, Redis): a CLI run with it acts on what they serve. */
  env: Record<string, string>;
  /** The running processes; `serveAgain` replaces a killed instance in place. */
  processes: GatewayProcess[];
  /** The processes' base URLs, to spread requests over. */
  bases(): string[];
  /** After `setup.kill(processes[0])`: a new instance in its place, or the primary's new workers serving. */
  serveAgain(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `setup` with `billing` as the catalog's billing section (the test catalog's models on the upstream double). */
export async function startScaleCluster(setup: ScaleSetup, billing: Record<string, unknown>): Promise<ScaleCluster> {
  const database = await createTestDatabase(setup.engine);
  const store = await openStore(database.url);
  // An upstream that bills every byte it is sent, or a hundred times that when asked.
  const upstream: UpstreamDouble = await startOpenAIUpstream({ usage: hostileUsage });
  const catalog = { ...(testCatalog({ upstreamBaseUrl: upstream.baseUrl }) as Record<string, unknown>), billing };
  const env = { TOLLGATE_DATABASE_URL: database.url, TOLLGATE_CONFIG: writeCatalog(catalog), TEST_UPSTREAM_KEY: 'sk-upstream-secret', ...setup.extraEnv };
  const processes: GatewayProcess[] = [];
  const stop = async () => {
    await Promise.all(processes.map((process) => process.stop()));
    await store.close();
    await database.drop();
    await upstream.close();
  };
  try {
    processes.push(...(await setup.start(env)));
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    database,
    store,
    env,
    processes,
    bases: () => processes.map((process) => process.baseUrl),
    serveAgain: async () => {
      if (processes.length > 1) processes[0] = await startGatewayProcess(env);
      else await waitFor(async () => (await fetch(`${processes[0]!.baseUrl}/healthz`).catch(() => undefined))?.status === 200, 10_000);
    },
    stop,
  };
}

/** One Chat Completions request to the process at `base`, on `dispatcher` when given (fresh connections). */
export function postChat(base: string, secret: string, body: object, dispatcher?: Agent): Promise<Response> {
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(dispatcher === undefined ? {} : { dispatcher }),
  } as RequestInit);
}
