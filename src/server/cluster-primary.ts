/**
 * `serve --workers N`: the primary prepares the database once, forks N workers that share the port,
 * replaces a worker that dies, and on SIGTERM/SIGINT lets every worker drain before exiting.
 * Without Redis, the workers share their limits through the primary (cluster IPC); `/metrics` on
 * any worker answers the sum of every worker's (cluster-metrics.ts).
 */
import cluster, { type Worker } from 'node:cluster';
import { startClusterLimiterPrimary } from '../ratelimit/cluster-limiter.js';
import { startClusterMetricsPrimary } from './cluster-metrics.js';
import type { Logger } from 'pino';

export interface PrimaryOptions {
  workers: number;
  logger: Logger;
  /** Called once, when the first worker listens, with the port it bound. */
  onListening: (port: number) => void;
  /** Added to every worker's environment (the seal key drawn for the run: seal-key.ts). */
  workerEnv?: Record<string, string>;
}

/** Resolves when every worker has exited after a stop signal. */
export function runPrimary(options: PrimaryOptions): Promise<void> {
  startClusterLimiterPrimary();
  startClusterMetricsPrimary();
  let stopping = false;
  let boundPort: number | undefined;
  // Replacements listen on the port already announced: with PORT=0 the primary drops the shared
  // handle once every worker is gone, and a new random port would strand the clients.
  const fork = (): Worker => cluster.fork({ ...options.workerEnv, TOLLGATE_CLUSTER_WORKER: '1', ...(boundPort === undefined ? {} : { PORT: String(boundPort) }) });

  cluster.on('listening', (_worker, address) => {
    if (boundPort !== undefined) return;
    boundPort = address.port;
    options.onListening(address.port);
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    options.logger.error({ workerPid: worker.process.pid, code, signal }, 'worker died; starting a replacement');
    fork();
  });
  for (let index = 0; index < options.workers; index++) fork();

  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      options.logger.info({ signal }, 'stopping workers (they drain first)');
      const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
      if (workers.length === 0) resolve();
      let remaining = workers.length;
      for (const worker of workers) {
        worker.once('exit', () => {
          remaining -= 1;
          if (remaining === 0) resolve();
        });
        worker.process.kill('SIGTERM');
      }
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
