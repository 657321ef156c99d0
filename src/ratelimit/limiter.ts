/**
 * One limiter interface for every backend (memory when alone, Redis when shared). Each limit is a
 * fixed window of `limit` points per `windowSeconds`, counted per subject (a key id). Backends are
 * rate-limiter-flexible limiters; this module only caches one per (limit, window) pair so per-key
 * overrides share the backend without a limiter per key.
 */
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface Limiter {
  /**
   * Takes `points` from `subject`'s window of `limit` per `windowSeconds`. Never throws for a
   * denial. With 0 points it only reads the window (`remaining`).
   */
  consume(subject: string, points: number, limit: number, windowSeconds: number): Promise<LimitDecision>;
  close(): Promise<void>;
}

export type LimiterFactory = (options: { points: number; duration: number; keyPrefix: string }) => RateLimiterAbstract;

export function createFlexibleLimiter(factory: LimiterFactory, onClose: () => Promise<void> = async () => {}): Limiter {
  const limiters = new Map<string, RateLimiterAbstract>();
  const limiterFor = (limit: number, windowSeconds: number): RateLimiterAbstract => {
    const name = `${limit}/${windowSeconds}`;
    let limiter = limiters.get(name);
    if (limiter === undefined) {
      limiter = factory({ points: limit, duration: windowSeconds, keyPrefix: `tollgate:rl:${name}` });
      limiters.set(name, limiter);
    }
    return limiter;
  };
  return {
    async consume(subject, points, limit, windowSeconds) {
      try {
        const result = await limiterFor(limit, windowSeconds).consume(subject, points);
        return { allowed: true, limit, remaining: Math.max(0, result.remainingPoints), resetMs: result.msBeforeNext };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          // A refused request must not use up the window: give its points back.
          await limiterFor(limit, windowSeconds)
            .reward(subject, points)
            .catch(() => undefined);
          return { allowed: false, limit, remaining: 0, resetMs: Math.max(0, rejection.msBeforeNext) };
        }
        throw rejection;
      }
    },
    close: onClose,
  };
}
