/**
 * One serving process: the store, the limiter and the gateway, listening. Used on its own
 * (`serve`) and as a cluster worker (`serve --workers N`). `stop()` drains: no new connections,
 * in-flight requests and streams finish (or are cut after the grace period, which bills what they
 * produced), bills settle, then everything closes.
 */
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { loadConfig } from '../config/load.js';
import { DEFAULT_DATABASE_URL, DEFAULT_HOST, DEFAULT_PORT, ENV, type Env } from '../config/env.js';
import { openStore } from '../store/open-store.js';
import { createGateway } from './gateway.js';
import { setUpLimits } from './limits-setup.js';
import { createMetrics } from '../observability/metrics.js';
import { clusterMetricsScraper } from './cluster-metrics.js';
import { startTracing } from './tracing.js';

export interface ServerProcess {
  port: number;
  logger: Logger;
  stop(): Promise<void>;
}

export function createLogger(env: Env): Logger {
  return pino({
    level: env[ENV.logLevel] ?? 'info',
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', 'secret'], censor: '[redacted]' },
  });
}

export function listenAddress(env: Env): { host: string; port: number } {
  const value = env[ENV.port];
  const port = value === undefined || value === '' ? DEFAULT_PORT : Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`PORT must be a port number, got ${JSON.stringify(value)}`);
  return { host: env[ENV.host] ?? DEFAULT_HOST, port };
}

/** `TOLLGATE_ADMIN_PORT`, or undefined when the admin API shares the public port. */
export function adminPort(env: Env): number | undefined {
  const value = env[ENV.adminPort];
  if (value === undefined || value === '') return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`${ENV.adminPort} must be a port number, got ${JSON.stringify(value)}`);
  return port;
}

export function databaseUrl(env: Env): string {
  return env[ENV.databaseUrl] ?? DEFAULT_DATABASE_URL;
}

function drainMilliseconds(env: Env): number {
  const seconds = Number(env[ENV.drainSeconds] ?? '30');
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 30_000;
}

export async function startServerProcess(env: Env, options: { migrate: boolean; clusterWorker: boolean }): Promise<ServerProcess> {
  const logger = createLogger(env);
  const config = loadConfig(env[ENV.config]);
  const { host, port } = listenAddress(env);
  const separateAdminPort = adminPort(env);
  const metrics = createMetrics();
  // `serve` runs SQLite's WAL checkpoints in a thread of its own store (serve.ts), not in these COMMITs.
  const store = await openStore(databaseUrl(env), {
    migrate: options.migrate,
    walCheckpoints: 'elsewhere',
    onHoldCommit: (operations) => metrics.holdCommits.observe(operations),
  });
  const limits = await setUpLimits(env, config, { clusterWorker: options.clusterWorker, logger, metrics });
  // A worker's /metrics answers the sum of every worker's registry, collected by the primary.
  const scrapeMetrics = options.clusterWorker ? clusterMetricsScraper(metrics.registry) : undefined;
  const tracing = await startTracing(env, logger);
  const keyEvents = limits.keyEvents;
  const gateway = await createGateway({
    config,
    store,
    limiter: limits.limiter,
    logger,
    env,
    metrics,
    ...(scrapeMetrics === undefined ? {} : { scrapeMetrics }),
    ...(tracing === undefined ? {} : { tracer: tracing.tracer }),
    adminListener: separateAdminPort !== undefined,
    ...(keyEvents === undefined ? {} : { announceKeyChange: () => keyEvents.publish() }),
  });
  // A key disabled through any instance is refused here at once (the store revision poll is the fallback).
  const unsubscribe = await keyEvents?.subscribe(() => gateway.authenticator.invalidate());
  await gateway.app.listen({ host, port });
  const bound = gateway.app.server.address() as AddressInfo;
  const adminServer = gateway.adminServer;
  if (adminServer !== undefined) {
    await new Promise<void>((resolve, reject) => {
      adminServer.once('error', reject);
      adminServer.listen(separateAdminPort, host, () => resolve());
    });
    logger.info({ port: (adminServer.address() as AddressInfo).port }, 'admin API listening on its own port');
  }

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      logger.info('draining in-flight requests');
      const grace = setTimeout(() => {
        logger.warn('drain grace period over: cutting the remaining connections (their usage is still billed)');
        gateway.app.server.closeAllConnections();
      }, drainMilliseconds(env));
      grace.unref();
      await gateway.close();
      clearTimeout(grace);
      // The spans of the drained requests go out before the process ends.
      await tracing?.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'flushing the traces failed'));
      await unsubscribe?.();
      await limits.close();
      await store.close();
      logger.info('stopped');
    })());
  return { port: bound.port, logger, stop };
}
