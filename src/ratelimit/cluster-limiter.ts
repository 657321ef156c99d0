/**
 * Limits shared by the worker processes of one `serve --workers N` without Redis: the primary
 * keeps every window in memory and each worker asks it over the cluster IPC channel
 * (rate-limiter-flexible's RateLimiterCluster), so the N workers together admit the configured
 * limit once. Separate machines or separate `serve` commands still need Redis.
 */
import cluster from 'node:cluster';
import { RateLimiterCluster, RateLimiterClusterMaster } from 'rate-limiter-flexible';
import { withFailurePolicy, type FailurePolicyOptions } from './failure-policy.js';
import { createFlexibleLimiter, type Limiter } from './limiter.js';

export interface ClusterWorkerLimiterOptions extends Partial<FailurePolicyOptions> {
  /** How long to wait for the primary's answer before applying the failure policy (default 1 s). */
  timeoutMs?: number;
}

/**
 * Answers the workers' limiter requests. Call once in the primary, before forking the workers
 * (their first message would otherwise be lost and their first requests wait for the timeout).
 */
export function startClusterLimiterPrimary(): void {
  if (!cluster.isPrimary) throw new Error('startClusterLimiterPrimary must run in the cluster primary');
  // A singleton inside rate-limiter-flexible: calling this twice keeps one listener.
  new RateLimiterClusterMaster();
}

/** A limiter in a cluster worker, counted by the primary (see startClusterLimiterPrimary). */
export function createClusterWorkerLimiter(options: ClusterWorkerLimiterOptions = {}): Limiter {
  if (!cluster.isWorker || process.send === undefined) {
    throw new Error('createClusterWorkerLimiter must run in a cluster worker; a single process uses the memory limiter');
  }
  const timeoutMs = options.timeoutMs ?? 1_000;
  const limiter = createFlexibleLimiter(
    (window) => new RateLimiterCluster({ points: window.points, duration: window.duration, keyPrefix: window.keyPrefix, timeoutMs }),
  );
  return withFailurePolicy(limiter, {
    onFailure: options.onFailure ?? 'open',
    onBackendError: options.onBackendError,
    onBackendRecovered: options.onBackendRecovered,
  });
}
