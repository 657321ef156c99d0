/**
 * Leases on a real Redis (TOLLGATE_TEST_REDIS_URL): how many commands a burst costs, and what
 * several instances admit together, with the client the gateway uses (auto-pipelined). Every
 * command a limiter's client sends is counted on the client itself.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LEASE, type LimitDecision, type Limiter } from './limiter.js';
import { createRedisClient, waitForRedis } from './redis-client.js';
import { createRedisLimiter } from './redis-limiter.js';

const redisUrl = process.env.TOLLGATE_TEST_REDIS_URL;
if (!redisUrl) console.info('Redis lease suite skipped: set TOLLGATE_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379) to run it.');

const keyPrefix = `tollgate-test:${randomUUID()}:`;
const opened: Limiter[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((limiter) => limiter.close()));
});

interface Instance {
  limiter: Limiter;
  client: Redis;
  /** Commands this instance's client has sent to Redis. */
  commands(): number;
}

async function instance(): Promise<Instance> {
  const client = createRedisClient(redisUrl ?? '', { autoPipelining: true });
  expect(await waitForRedis(client, 5_000)).toBe(true);
  let sent = 0;
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    sent += 1;
    return send(...args);
  }) as Redis['sendCommand'];
  const limiter = createRedisLimiter(client, { onFailure: 'closed', keyPrefix });
  opened.push(limiter);
  return { limiter, client, commands: () => sent };
}

const admitted = (decisions: LimitDecision[]) => decisions.filter((decision) => decision.allowed).length;

describe.skipIf(!redisUrl)('leases on a real Redis', () => {
  it('a burst of 100 requests one after another costs a handful of commands, with exact headers', async () => {
    const { limiter, commands } = await instance();
    const decisions: LimitDecision[] = [];
    for (let index = 0; index < 100; index++) decisions.push(await limiter.consume('sequential', 1, 10_000, 60));
    expect(admitted(decisions)).toBe(100);
    expect(decisions.map((decision) => decision.remaining)).toEqual(Array.from({ length: 100 }, (_, index) => 9_999 - index));
    // The scripts are loaded once (EVALSHA, then EVAL on NOSCRIPT): 1, 2, 3, 6, 12, 24, 48 … points a take.
    expect(commands()).toBeLessThanOrEqual(12);
  });

  it('a burst of 100 concurrent requests costs two or three commands', async () => {
    const { limiter, commands } = await instance();
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.consume('concurrent', 1, 10_000, 60)));
    expect(admitted(decisions)).toBe(100);
    expect(new Set(decisions.map((decision) => decision.remaining)).size).toBe(100);
    expect(commands()).toBeLessThanOrEqual(4);
  });

  it('three instances never admit more than the limit; what they leased ahead goes back on close', async () => {
    const instances = await Promise.all([instance(), instance(), instance()]);
    const limit = 250;
    // Warm leases first (spare points ahead), then everyone floods past the limit.
    for (const { limiter } of instances) for (let index = 0; index < 20; index++) await limiter.consume('shared', 1, limit, 60);
    const flood = await Promise.all(instances.flatMap(({ limiter }) => Array.from({ length: 100 }, () => limiter.consume('shared', 1, limit, 60))));
    const total = 60 + admitted(flood);
    expect(total).toBeLessThanOrEqual(limit);
    // Refused early only by points another instance holds unspent: at most limit / 64 each.
    expect(total).toBeGreaterThanOrEqual(limit - 2 * Math.floor(limit / LEASE.limitShare));
    await Promise.all(instances.map(({ limiter }) => limiter.close()));
    const reader = await instance();
    expect(await reader.limiter.consume('shared', 0, limit, 60)).toMatchObject({ remaining: limit - total });
  });

  it('gives points back only to the window they came from', async () => {
    const first = await instance();
    for (let index = 0; index < 30; index++) await first.limiter.consume('ended', 1, 6_400, 60);
    // The window is gone (as when it expires) and another instance opens the next one.
    await first.client.del(`${keyPrefix}tollgate:window:6400/60:ended`);
    const second = await instance();
    expect(await second.limiter.consume('ended', 5, 6_400, 60)).toMatchObject({ allowed: true, remaining: 6_395 });
    await first.limiter.close();
    expect(await second.limiter.consume('ended', 0, 6_400, 60)).toMatchObject({ remaining: 6_395 });
  });
});
