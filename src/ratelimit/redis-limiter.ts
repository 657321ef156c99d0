/**
 * Limits shared by every instance through one Redis: each window is one Redis key updated by an
 * atomic Lua script (rate-limiter-flexible's RateLimiterRedis), so N instances together admit
 * exactly the configured limit, not N times it.
 *
 * While Redis cannot be reached, `open` falls back to this instance's own in-memory windows
 * (rate-limiter-flexible's insurance limiter): each instance then admits at most the limit on its
 * own, rather than everything. `closed` refuses instead.
 */
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type IRateLimiterOptions, type RateLimiterRes } from 'rate-limiter-flexible';
import { BackendHealth, withFailurePolicy, type FailurePolicyOptions } from './failure-policy.js';
import { createFlexibleLimiter, type Limiter } from './limiter.js';
import { closeRedisClient } from './redis-client.js';

export interface RedisLimiterOptions extends FailurePolicyOptions {
  /** Put before every Redis key (tests use a unique one per run); default none. */
  keyPrefix?: string;
}

/** The error reported for a decision the insurance limiter took (Redis's own error is not handed over). */
export const REDIS_FALLBACK_ERROR = 'Redis did not answer; decided by this instance’s in-memory limits';

/** An in-memory window that reports each decision it takes in Redis's place. */
class InsuranceLimiter extends RateLimiterMemory {
  constructor(
    options: IRateLimiterOptions,
    private readonly onDecision: () => void,
  ) {
    super(options);
  }

  override consume(key: string | number, points?: number, options?: { [key: string]: unknown }): Promise<RateLimiterRes> {
    this.onDecision();
    return super.consume(key, points, options);
  }
}

/**
 * A limiter on `redis` (make it with `createRedisClient`, so a down Redis fails fast). The limiter
 * owns the client: `close()` quits it.
 */
export function createRedisLimiter(redis: Redis, options: RedisLimiterOptions): Limiter {
  const prefix = options.keyPrefix ?? '';
  const health = new BackendHealth(options);
  const limiter = createFlexibleLimiter(
    (window) =>
      new RateLimiterRedis({
        storeClient: redis,
        points: window.points,
        duration: window.duration,
        keyPrefix: `${prefix}${window.keyPrefix}`,
        // Fail at once while disconnected instead of handing the command to the client at all.
        rejectIfRedisNotReady: true,
        // No in-process blocking: every decision is Redis's while it answers, so instances never disagree.
        inMemoryBlockOnConsumed: 0,
        insuranceLimiter:
          options.onFailure === 'open'
            ? new InsuranceLimiter({ points: window.points, duration: window.duration, keyPrefix: window.keyPrefix }, () => health.failed(new Error(REDIS_FALLBACK_ERROR)))
            : undefined,
      }),
    () => closeRedisClient(redis),
  );
  return withFailurePolicy(limiter, options, health);
}
