/**
 * Chooses where rate limits live: Redis when `TOLLGATE_REDIS_URL` is set (one window for every
 * instance, plus key-change announcements between instances), the cluster primary for workers
 * without Redis, or this process alone. A failing limit store admits (with Redis: on each
 * instance's own in-memory limits) or refuses by config, and its outage is logged once a minute.
 */
import type { Logger } from 'pino';
import { createKeyEvents, type KeyEvents } from '../auth/key-events.js';
import type { ConfigFile } from '../config/schema.js';
import { ENV, type Env } from '../config/env.js';
import { createClusterWorkerLimiter } from '../ratelimit/cluster-limiter.js';
import type { BackendFailurePolicy } from '../ratelimit/failure-policy.js';
import type { Limiter } from '../ratelimit/limiter.js';
import { createMemoryLimiter } from '../ratelimit/memory-limiter.js';
import { createOutageLog } from '../ratelimit/outage-log.js';
import type { Metrics } from '../observability/metrics.js';

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
  const redisUrl = env[ENV.redisUrl];
  const shared = redisUrl !== undefined && redisUrl !== '';
  // Every decision is counted; the log gets the outage's start, a line a minute, and its end.
  const outage = createOutageLog({ logger: options.logger, meanwhile: meanwhile(policy, shared) });
  const failureReports = {
    onBackendError: (error: unknown) => {
      options.metrics.limiterFailures.inc({ policy });
      outage.failed(error);
    },
    onBackendRecovered: () => outage.recovered(),
  };
  if (!shared) {
    const limiter = options.clusterWorker ? createClusterWorkerLimiter({ onFailure: policy, ...failureReports }) : createMemoryLimiter();
    return { limiter, shared: false, keyEvents: undefined, close: () => limiter.close() };
  }
  // Redis's client is loaded only when it is configured (docs/architecture.md, "What a process loads").
  const [{ closeRedisClient, createRedisClient, waitForRedis }, { createRedisLimiter }] = await Promise.all([import('../ratelimit/redis-client.js'), import('../ratelimit/redis-limiter.js')]);
  // Once per outage per client (see createRedisClient), and without the stack: it is a network error.
  const onError = (error: unknown) => options.logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'redis connection problem');
  const client = createRedisClient(redisUrl, { onError, autoPipelining: true });
  if (!(await waitForRedis(client, 2_000))) options.logger.warn(`Redis at ${redactUrl(redisUrl)} is not reachable yet; ${meanwhile(policy, true)} until it is`);
  const limiter = createRedisLimiter(client, { onFailure: policy, ...failureReports });
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

/** What limits do while their store is away, in the words of the log. */
function meanwhile(policy: BackendFailurePolicy, redis: boolean): string {
  if (policy === 'closed') return 'requests are refused with 429';
  return redis ? 'limits are counted by each instance on its own, in memory' : 'limits admit every request';
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
