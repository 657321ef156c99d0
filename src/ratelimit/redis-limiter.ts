/**
 * Limits shared by every instance through one Redis: each window is one Redis key updated by an
 * atomic Lua script (rate-limiter-flexible's RateLimiterRedis), so N instances together admit
 * exactly the configured limit, not N times it.
 */
import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { withFailurePolicy, type FailurePolicyOptions } from './failure-policy.js';
import { createFlexibleLimiter, type Limiter } from './limiter.js';
import { closeRedisClient } from './redis-client.js';

export interface RedisLimiterOptions extends FailurePolicyOptions {
  /** Put before every Redis key (tests use a unique one per run); default none. */
  keyPrefix?: string;
}

/**
 * A limiter on `redis` (make it with `createRedisClient`, so a down Redis fails fast). The limiter
 * owns the client: `close()` quits it.
 */
export function createRedisLimiter(redis: Redis, options: RedisLimiterOptions): Limiter {
  const prefix = options.keyPrefix ?? '';
  const limiter = createFlexibleLimiter(
    (window) =>
      new RateLimiterRedis({
        storeClient: redis,
        points: window.points,
        duration: window.duration,
        keyPrefix: `${prefix}${window.keyPrefix}`,
        // Fail at once while disconnected instead of handing the command to the client at all.
        rejectIfRedisNotReady: true,
        // No in-process blocking: every decision is Redis's, so instances never disagree.
        inMemoryBlockOnConsumed: 0,
      }),
    () => closeRedisClient(redis),
  );
  return withFailurePolicy(limiter, options);
}
