/**
 * What a shared limiter answers when its backend (Redis, the cluster primary) cannot: the
 * operator's `rate_limits.on_backend_failure`. `open` keeps serving without limits while the
 * backend is away; `closed` refuses with the spec's 429 until it is back. Either way the failure is
 * reported, so it is seen in the logs and the metrics rather than only in the traffic.
 */
import { Counter, type Registry } from 'prom-client';
import type { LimitDecision, Limiter } from './limiter.js';

export type BackendFailurePolicy = 'open' | 'closed';

export interface FailurePolicyOptions {
  onFailure: BackendFailurePolicy;
  /** Called once per decision taken without the backend, with the backend's error. */
  onBackendError?: (error: unknown) => void;
}

/** How soon a client refused because the backend failed may try again (`retry-after`). */
export const CLOSED_RETRY_MS = 1_000;

/** `limiter`, answering by `options.onFailure` instead of throwing when its backend fails. */
export function withFailurePolicy(limiter: Limiter, options: FailurePolicyOptions): Limiter {
  return {
    async consume(subject, points, limit, windowSeconds) {
      try {
        return await limiter.consume(subject, points, limit, windowSeconds);
      } catch (error) {
        options.onBackendError?.(error);
        return decisionWithoutBackend(options.onFailure, points, limit, windowSeconds);
      }
    },
    close: () => limiter.close(),
  };
}

/**
 * The decision when nothing could be counted. Open: what a fresh window would say, since nothing
 * was taken from one; a request larger than the whole limit is still refused, because that needs
 * no backend to know. Closed: refused, with a short retry hint rather than a whole window.
 */
export function decisionWithoutBackend(policy: BackendFailurePolicy, points: number, limit: number, windowSeconds: number): LimitDecision {
  if (policy === 'closed') return { allowed: false, limit, remaining: 0, resetMs: CLOSED_RETRY_MS };
  const allowed = points <= limit;
  return { allowed, limit, remaining: allowed ? limit - points : 0, resetMs: windowSeconds * 1_000 };
}

/**
 * `tollgate_rate_limit_backend_failures_total{policy}`: decisions taken without the limit backend.
 * Pass its `inc` to `onBackendError`: `(error) => { counter.inc({ policy }); log(error); }`.
 */
export function limiterFailureCounter(registry: Registry): Counter<'policy'> {
  return new Counter({
    name: 'tollgate_rate_limit_backend_failures_total',
    help: 'Rate-limit decisions taken without the shared limit store (Redis or the cluster primary), by failure policy.',
    labelNames: ['policy'],
    registers: [registry],
  });
}
