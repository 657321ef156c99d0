/**
 * Limits shared by every instance through one Redis: each window is one Redis hash taken from by an
 * atomic Lua script (`grantFrom`'s rule), and each instance leases points of it
 * (`createLeaseLimiter`), so N instances together admit the configured limit, not N times it, with
 * a command to Redis only when a lease runs out rather than per request.
 *
 * While Redis cannot be reached, `open` falls back to this instance's own in-memory windows: each
 * instance then admits at most the limit on its own, rather than everything. `closed` refuses
 * instead.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { BackendHealth, withFailurePolicy, type FailurePolicyOptions } from './failure-policy.js';
import { createLeaseLimiter, LEASE, type Limiter, type TakeRequest, type WindowAnswer, type WindowStore } from './limiter.js';
import { createMemoryLimiter } from './memory-limiter.js';
import { closeRedisClient } from './redis-client.js';

export interface RedisLimiterOptions extends FailurePolicyOptions {
  /** Put before every Redis key (tests use a unique one per run); default none. */
  keyPrefix?: string;
}

/** What a decision taken by the in-memory fallback is reported with (followed by Redis's error). */
export const REDIS_FALLBACK_ERROR = 'Redis did not answer; decided by this instance’s in-memory limits';

/**
 * `grantFrom` in Lua. KEYS[1]: the window, a hash of `used` points and the window's `id`, expiring
 * with the window. ARGV: least, need, spare, limit, windowMs, the id for a window this call opens.
 * Answers { granted, left, resetMs, id }.
 */
const TAKE_SCRIPT = `
local used = tonumber(redis.call('HGET', KEYS[1], 'used'))
local id = ARGV[6]
if used == nil then
  used = 0
  redis.call('HSET', KEYS[1], 'used', 0, 'id', id)
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
else
  id = redis.call('HGET', KEYS[1], 'id')
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  ttl = tonumber(ARGV[5])
end
local left = math.max(0, tonumber(ARGV[4]) - used)
local granted = 0
if left >= tonumber(ARGV[1]) then
  local needed = math.min(left, tonumber(ARGV[2]))
  granted = needed + math.min(tonumber(ARGV[3]), math.floor((left - needed) / ${LEASE.restShare}))
  if granted > 0 then redis.call('HINCRBY', KEYS[1], 'used', granted) end
end
return { granted, left - granted, ttl, id }
`;

/** KEYS[1]: the window; ARGV: points, the window's id. Points go back only to the window they came from. */
const GIVE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'id') == ARGV[2] then
  local used = tonumber(redis.call('HGET', KEYS[1], 'used'))
  redis.call('HSET', KEYS[1], 'used', math.max(0, used - tonumber(ARGV[1])))
end
return 0
`;

interface WindowScripts {
  tollgateTakeWindow(key: string, ...args: Array<string | number>): Promise<unknown>;
  tollgateGiveWindow(key: string, points: number, window: string): Promise<unknown>;
}

/** The windows in Redis. Fails at once while disconnected instead of handing the command to the client at all. */
class RedisWindows implements WindowStore {
  private readonly scripts: WindowScripts;
  /** Ids of the windows this process opens: unique per process, then per window. */
  private readonly idPrefix = randomUUID();
  private opened = 0;

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {
    redis.defineCommand('tollgateTakeWindow', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    redis.defineCommand('tollgateGiveWindow', { numberOfKeys: 1, lua: GIVE_SCRIPT });
    this.scripts = redis as unknown as WindowScripts;
  }

  async take(key: string, request: TakeRequest): Promise<WindowAnswer> {
    this.requireReady();
    this.opened += 1;
    const { least, need, spare, limit, windowMs } = request;
    const reply = await this.scripts.tollgateTakeWindow(this.keyOf(key), least, need, spare, limit, windowMs, `${this.idPrefix}.${this.opened}`);
    if (!Array.isArray(reply) || reply.length !== 4) throw new Error('Redis answered a rate-limit lease with something else than a window');
    const [granted, left, resetMs, window] = reply as unknown[];
    if (typeof granted !== 'number' || typeof left !== 'number' || typeof resetMs !== 'number' || typeof window !== 'string') {
      throw new Error('Redis answered a rate-limit lease with something else than a window');
    }
    return { granted, left, resetMs, window };
  }

  async give(key: string, points: number, window: string): Promise<void> {
    this.requireReady();
    await this.scripts.tollgateGiveWindow(this.keyOf(key), points, window);
  }

  close(): Promise<void> {
    return closeRedisClient(this.redis);
  }

  private keyOf(key: string): string {
    return `${this.keyPrefix}tollgate:window:${key}`;
  }

  private requireReady(): void {
    if (this.redis.status !== 'ready') throw new Error('Redis connection is not ready');
  }
}

/**
 * A limiter on `redis` (make it with `createRedisClient`, so a down Redis fails fast). The limiter
 * owns the client: `close()` gives back unspent leases, then quits it.
 */
export function createRedisLimiter(redis: Redis, options: RedisLimiterOptions): Limiter {
  const health = new BackendHealth(options);
  const leased = createLeaseLimiter(new RedisWindows(redis, options.keyPrefix ?? ''));
  const limiter = options.onFailure === 'open' ? withLocalFallback(leased, health) : leased;
  return withFailurePolicy(limiter, options, health);
}

/** `leased`, deciding by this instance's own in-memory windows (each decision reported) when Redis fails. */
function withLocalFallback(leased: Limiter, health: BackendHealth): Limiter {
  const local = createMemoryLimiter();
  return {
    async consume(subject, points, limit, windowSeconds) {
      try {
        return await leased.consume(subject, points, limit, windowSeconds);
      } catch (error) {
        health.failed(new Error(`${REDIS_FALLBACK_ERROR}: ${error instanceof Error ? error.message : String(error)}`));
        return local.consume(subject, points, limit, windowSeconds);
      }
    },
    async close() {
      await leased.close();
      await local.close();
    },
  };
}
