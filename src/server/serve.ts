/**
 * `tollgate serve`: with the built-in demo catalog (or when asked), on a fresh database prints the
 * demo key once with curl lines that work as printed, then serves, as one process or as a primary with N workers sharing the port.
 * SIGTERM/SIGINT drain in-flight requests and streams (their bills settle) before exiting.
 */
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { CLI_ACTOR } from '../admin/audit.js';
import { createAdminToken } from '../admin/admin-tokens.js';
import { ensureDemoAccount } from '../admin/demo.js';
import { loadConfig } from '../config/load.js';
import { ENV, type Env } from '../config/env.js';
import { workersSealKey } from './seal-key.js';
import { openStore } from '../store/open-store.js';
import { runPrimary } from './cluster-primary.js';
import { tracingSettings } from './tracing.js';
import { acceptLocalLimitsFrom, guardInstance, instanceIdFor } from './instance-guard.js';
import { createLogger, databaseUrl, listenAddress, startServerProcess } from './server-process.js';

export interface ServeOptions {
  /** A whole number, or `auto` for one per CPU. */
  workers: string;
  migrate: boolean;
  /** Create the demo account even with an operator's catalog (`--demo`). */
  demo?: boolean;
}

const DEMO_BALANCE_USD = '5';
const CLUSTER_WORKER = 'TOLLGATE_CLUSTER_WORKER';

export function resolveWorkers(value: string): number {
  if (value === 'auto') return availableParallelism();
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1) throw new Error(`--workers must be "auto" or a whole number of at least 1, got ${JSON.stringify(value)}`);
  return count;
}

export async function runServe(options: ServeOptions, env: Env = process.env): Promise<void> {
  if (cluster.isWorker && env[CLUSTER_WORKER] === '1') return runWorker(env);
  const workers = resolveWorkers(options.workers);
  const logger = createLogger(env);
  // Validate the catalog before anything else, so a bad file fails fast and names its field.
  const config = loadConfig(env[ENV.config]);
  // Likewise the OTEL_* values, before a worker could fail on them (and be replaced, and fail…).
  tracingSettings(env);
  // This store, the one process-wide store of `serve` (of the primary with --workers N), runs the
  // SQLite WAL checkpoints in a thread of their own; the serving stores' COMMITs then never do
  // (startServerProcess opens them with `elsewhere`). One thread per database is enough, and the
  // primary's outlives any worker's restart.
  const store = await openStore(databaseUrl(env), {
    migrate: options.migrate,
    walCheckpoints: 'thread',
    onCheckpointError: (error) => logger.warn({ err: error }, 'the WAL checkpoint thread stopped; commits checkpoint SQLite again (past 10,000 pages)'),
  });
  // `tollgate serve` is a command of whoever holds the database URL: its demo account is audited as the CLI's.
  const demoAccount = wantsDemoAccount(options, env) ? await ensureDemoAccount(store, { balanceUsd: DEMO_BALANCE_USD }, CLI_ACTOR) : null;
  // With the demo account, a first owner token for the console, so that a newcomer can sign in as
  // the operator at once (shown once, like the key).
  const demo: BannerSecrets | undefined =
    demoAccount === null ? undefined : { key: demoAccount.secret, ownerToken: (await createAdminToken(store, { role: 'owner', name: DEMO_OWNER_TOKEN_NAME }, CLI_ACTOR)).secret };
  const { host, port } = listenAddress(env);
  // Several instances without a shared limit store would each admit a full window: refuse that.
  const heartbeat = await guardInstance(
    store,
    { id: instanceIdFor(port), sharedLimits: (env[ENV.redisUrl] ?? '') !== '' },
    { acceptLocalLimits: acceptLocalLimitsFrom(env), onError: (error) => logger.warn({ err: error }, 'instance heartbeat failed') },
  ).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const release = async () => {
    await heartbeat.stop();
    await store.close();
  };
  const announce = (bound: number) => process.stdout.write(banner(baseUrl(host, bound), demo, bannerModels(config.models)));

  if (workers === 1) {
    const server = await startServerProcess(env, { migrate: false, clusterWorker: false });
    announce(server.port);
    stopOnSignal(async () => {
      await server.stop();
      await release();
    }, server.logger);
    return;
  }
  await runPrimary({ workers, logger, onListening: announce, workerEnv: workersSealKey(env, logger) });
  await release();
  logger.info('all workers stopped');
}

/**
 * A funded key printed on stdout belongs on a newcomer's terminal, not in an operator's service
 * logs: only the built-in demo catalog (no TOLLGATE_CONFIG) gets one unasked.
 */
export function wantsDemoAccount(options: Pick<ServeOptions, 'demo'>, env: Env): boolean {
  if (options.demo === true || env[ENV.demo] === '1') return true;
  const catalog = env[ENV.config];
  return catalog === undefined || catalog === '';
}

async function runWorker(env: Env): Promise<void> {
  const server = await startServerProcess(env, { migrate: false, clusterWorker: true });
  stopOnSignal(() => server.stop(), server.logger);
}

function stopOnSignal(stop: () => Promise<void>, logger: { error: (object: object, message: string) => void }): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      stop().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

function baseUrl(host: string, port: number): string {
  return `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
}

/** The models the banner's curl lines use: the first that serves each endpoint. */
export interface BannerModels {
  chat: string;
  embeddings?: string;
  moderations?: string;
}

export function bannerModels(models: ReadonlyArray<{ id: string; endpoints: readonly string[] }>): BannerModels {
  const serving = (endpoint: string) => models.find((model) => model.endpoints.includes(endpoint))?.id;
  const embeddings = serving('embeddings');
  const moderations = serving('moderations');
  return { chat: serving('chat-completions') ?? 'model-5.6', ...(embeddings === undefined ? {} : { embeddings }), ...(moderations === undefined ? {} : { moderations }) };
}

/** The name of the owner token made beside the demo account. */
export const DEMO_OWNER_TOKEN_NAME = 'demo owner';

/** What a fresh database's demo hands out, each shown once. */
export interface BannerSecrets {
  /** The demo account's API key. */
  key: string;
  /** An owner token of the admin API and console. */
  ownerToken: string;
}

/**
 * What a newcomer sees: where to point a client, where the console is and how to sign in to it,
 * and, on a fresh database, the demo key, an owner token and curl lines.
 */
export function banner(base: string, demo: BannerSecrets | undefined, models: BannerModels): string {
  const model = models.chat;
  const lines = [`Tollgate is listening on ${base}  (OpenAI base URL: ${base}/v1)`, `Web console: ${base}/console/`];
  if (demo !== undefined) {
    const secret = demo.key;
    const auth = `-H "Authorization: Bearer ${secret}" -H "Content-Type: application/json"`;
    lines.push(
      '',
      `Created the demo account with $${DEMO_BALANCE_USD} and this API key (shown once, keep it):`,
      `  ${secret}`,
      'and an owner admin token, to sign in to the console as the operator (shown once, keep it):',
      `  ${demo.ownerToken}`,
      'The console also takes the API key, to show that key its own account.',
      '',
      'Try it:',
      `  curl ${base}/v1/chat/completions ${auth} -d '{"model":"${model}","messages":[{"role":"user","content":"Hello!"}]}'`,
      `  curl ${base}/v1/responses ${auth} -d '{"model":"${model}","input":"Hello!","reasoning":{"effort":"low"}}'`,
    );
    if (models.embeddings !== undefined) lines.push(`  curl ${base}/v1/embeddings ${auth} -d '{"model":"${models.embeddings}","input":"Hello!","dimensions":8}'`);
    if (models.moderations !== undefined) lines.push(`  curl ${base}/v1/moderations ${auth} -d '{"model":"${models.moderations}","input":"Hello!"}'`);
  } else {
    lines.push(
      'Create a key with: npx tollgate keys create --account NAME  (an account first: npx tollgate accounts create --name NAME --balance USD)',
      'Sign in to the console with an admin token: npx tollgate admin-tokens create --role owner',
    );
  }
  return `${lines.join('\n')}\n\n`;
}
