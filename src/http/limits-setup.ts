/**
 * Chooses where rate limits live: Redis when `TOLLGATE_REDIS_URL` is set (one window for every
 * instance, plus key-change announcements between instances), the cluster primary for workers
 * without Redis, or this process alone. A failing limit store admits or refuses by config.
 */
import type { Logger } from 'pino';
import { createKeyEvents, type KeyEvents } from '../auth/key-events.js';
import type { ConfigFile } from '../config/schema.js';
import { ENV } from '../config/env.js';
import { createClusterWorkerLimiter } from '../ratelimit/cluster-limiter.js';
import type { Limiter } from '../ratelimit/limiter.js';
import { createMemoryLimiter } from '../ratelimit/memory-limiter.js';
import { closeRedisClient, createRedisClient, waitForRedis } from '../ratelimit/redis-client.js';
import { createRedisLimiter } from '../ratelimit/redis-limiter.js';
import type { Metrics } from './metrics.js';
import type { Env } from './server-process.js';

export interface LimitsSetup {
  limiter: Limiter;
  /** Whether every instance shares the limits (Redis). */
  shared: boolean;
  /** Present with Redis: announcements of key and account changes between instances. */
  keyEvents: KeyEvents | undefined;
  close(): Promise<void>;
}

export async function setUpLimits(env: Env, config: ConfigFile, options: { clusterWorker: boolean; logger: Logger; metrics: Metrics }): Promise<LimitsSetup> {
  const policy = config.rate_limits.on_backend_failure;
  const onBackendError = (error: unknown) => {
    options.metrics.limiterFailures.inc({ policy });
    options.logger.warn({ err: error, policy }, 'rate-limit store failed; deciding without it');
  };
  const redisUrl = env[ENV.redisUrl];
  if (redisUrl === undefined || redisUrl === '') {
    const limiter = options.clusterWorker ? createClusterWorkerLimiter({ onFailure: policy, onBackendError }) : createMemoryLimiter();
    return { limiter, shared: false, keyEvents: undefined, close: () => limiter.close() };
  }
  const onError = (error: unknown) => options.logger.warn({ err: error }, 'redis connection problem');
  const client = createRedisClient(redisUrl, { onError });
  if (!(await waitForRedis(client, 2_000))) options.logger.warn(`Redis at ${redactUrl(redisUrl)} is not reachable yet; limits ${policy === 'open' ? 'admit' : 'refuse'} until it is`);
  const limiter = createRedisLimiter(client, { onFailure: policy, onBackendError });
  const publisher = createRedisClient(redisUrl, { onError });
  const subscriber = createRedisClient(redisUrl, { onError });
  const keyEvents = createKeyEvents({ publisher, subscriber, onError });
  return {
    limiter,
    shared: true,
    keyEvents,
    async close() {
      await limiter.close();
      await Promise.all([closeRedisClient(publisher), closeRedisClient(subscriber)]);
    },
  };
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
