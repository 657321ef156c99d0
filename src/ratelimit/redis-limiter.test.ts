/**
 * The Redis limiter against a real Redis (TOLLGATE_TEST_REDIS_URL), and its failure policy against
 * Redis servers that refuse connections or never answer (always run: they need no Redis).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { startTcpProxy } from '../../test/support/tcp-proxy.js';
import { CLOSED_RETRY_MS } from './failure-policy.js';
import type { LimitDecision, Limiter } from './limiter.js';
import { closeRedisClient, createRedisClient, waitForRedis } from './redis-client.js';
import { createRedisLimiter, REDIS_FALLBACK_ERROR } from './redis-limiter.js';

const redisUrl = process.env.TOLLGATE_TEST_REDIS_URL;
if (!redisUrl) console.info('Redis limiter suite on a real Redis skipped: set TOLLGATE_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379) to run it.');

/** A port on which nothing listens: connecting is refused at once. */
const REFUSED_URL = 'redis://127.0.0.1:1';

const opened: Limiter[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((limiter) => limiter.close()));
});

/** Fails the test instead of letting it hang when `promise` does not settle in `ms`. */
function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** Every case runs with each client form: one write per command, and auto-pipelined (the gateway's). */
let autoPipelining = false;

function limiterOn(url: string, options: Parameters<typeof createRedisLimiter>[1]): { limiter: Limiter; client: Redis } {
  const client = createRedisClient(url, { autoPipelining });
  const limiter = createRedisLimiter(client, options);
  opened.push(limiter);
  return { limiter, client };
}

describe.each([false, true])('with autoPipelining %s', (pipelined) => {
  beforeAll(() => {
    autoPipelining = pipelined;
  });

  describe.skipIf(!redisUrl)('redis limiter on a real Redis', () => {
    const url = redisUrl ?? '';
    const keyPrefix = `tollgate-test:${randomUUID()}:`;

    async function readyLimiters(count: number): Promise<Limiter[]> {
      const made = Array.from({ length: count }, () => limiterOn(url, { onFailure: 'closed', keyPrefix }));
      for (const { client } of made) expect(await waitForRedis(client, 5_000)).toBe(true);
      return made.map(({ limiter }) => limiter);
    }

    it('admits exactly the limit across three instances consuming concurrently', async () => {
      const limiters = await readyLimiters(3);
      const attempts: Array<Promise<LimitDecision>> = [];
      for (let round = 0; round < 20; round++) {
        for (const limiter of limiters) attempts.push(limiter.consume('key_shared', 1, 25, 60));
      }
      const decisions = await Promise.all(attempts);
      const admitted = decisions.filter((decision) => decision.allowed);
      expect(admitted).toHaveLength(25);
      // Each admission saw a different count: no two instances were handed the same slot.
      expect(admitted.map((decision) => decision.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
      for (const refused of decisions.filter((decision) => !decision.allowed)) {
        expect(refused.remaining).toBe(0);
        expect(refused.resetMs).toBeGreaterThan(0);
        expect(refused.resetMs).toBeLessThanOrEqual(60_000);
      }
    });

    it('opens a new window once the old one has passed', async () => {
      const [limiter] = await readyLimiters(1);
      expect((await limiter!.consume('key_reset', 1, 2, 1)).allowed).toBe(true);
      expect((await limiter!.consume('key_reset', 1, 2, 1)).allowed).toBe(true);
      const refused = await limiter!.consume('key_reset', 1, 2, 1);
      expect(refused.allowed).toBe(false);
      expect(refused.resetMs).toBeLessThanOrEqual(1_000);
      await new Promise((resolve) => setTimeout(resolve, refused.resetMs + 100));
      const afterReset = await limiter!.consume('key_reset', 1, 2, 1);
      expect(afterReset).toMatchObject({ allowed: true, remaining: 1 });
    });

    it('keeps per-key overrides, subjects and token weights apart, across instances', async () => {
      const [first, second] = await readyLimiters(2);
      expect((await first!.consume('key_override', 1, 1, 60)).allowed).toBe(true);
      expect((await second!.consume('key_override', 1, 1, 60)).allowed).toBe(false);
      // Another limit for the same subject is another window.
      expect(await second!.consume('key_override', 1, 5, 60)).toMatchObject({ allowed: true, remaining: 4 });
      expect(await first!.consume('key_other', 1, 1, 60)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await first!.consume('tokens', 700, 1_000, 60)).toMatchObject({ allowed: true, remaining: 300 });
      expect((await second!.consume('tokens', 400, 1_000, 60)).allowed).toBe(false);
    });

    it('reads a shared window without changing it when taking no points', async () => {
      const [first, second] = await readyLimiters(2);
      expect(await first!.consume('key_read', 0, 2, 60)).toMatchObject({ allowed: true, remaining: 2 });
      await second!.consume('key_read', 1, 2, 60);
      await second!.consume('key_read', 1, 2, 60);
      expect(await first!.consume('key_read', 0, 2, 60)).toMatchObject({ allowed: true, remaining: 0 });
      expect((await first!.consume('key_read', 1, 2, 60)).allowed).toBe(false);
    });

    it('fails open while Redis is away, then counts in Redis again when it is back', async () => {
      const proxy = await startTcpProxy(new URL(url));
      try {
        const failures: unknown[] = [];
        let recoveries = 0;
        const { limiter, client } = limiterOn(`redis://127.0.0.1:${proxy.port}`, {
          onFailure: 'open',
          keyPrefix,
          onBackendError: (error) => failures.push(error),
          onBackendRecovered: () => (recoveries += 1),
        });
        expect(await waitForRedis(client, 5_000)).toBe(true);
        expect(await limiter.consume('key_recovery', 1, 10, 60)).toMatchObject({ allowed: true, remaining: 9 });
        expect(recoveries).toBe(0);

        await proxy.stop();
        // This instance's own window, fresh, counting: 9 then 8 left.
        expect(await withinMs(limiter.consume('key_recovery', 1, 10, 60), 3_000)).toMatchObject({ allowed: true, limit: 10, remaining: 9 });
        expect(await withinMs(limiter.consume('key_recovery', 1, 10, 60), 3_000)).toMatchObject({ allowed: true, limit: 10, remaining: 8 });
        expect(failures).toHaveLength(2);

        await proxy.start();
        expect(await waitForRedis(client, 10_000)).toBe(true);
        // Redis's own count again: the admissions made while it was away were never recorded there.
        expect(await limiter.consume('key_recovery', 1, 10, 60)).toMatchObject({ allowed: true, remaining: 8 });
        expect(await limiter.consume('key_recovery', 1, 10, 60)).toMatchObject({ allowed: true, remaining: 7 });
        expect(recoveries).toBe(1);
        expect(failures).toHaveLength(2);
      } finally {
        await proxy.stop();
      }
    });

    it('gives up on a connected Redis that stops answering, by the command timeout', async () => {
      const proxy = await startTcpProxy(new URL(url));
      try {
        const failures: unknown[] = [];
        const { limiter, client } = limiterOn(`redis://127.0.0.1:${proxy.port}`, {
          onFailure: 'closed',
          keyPrefix,
          onBackendError: (error) => failures.push(error),
        });
        expect(await waitForRedis(client, 5_000)).toBe(true);
        expect((await limiter.consume('key_hung', 1, 10, 60)).allowed).toBe(true);
        proxy.freeze(true);
        expect(await withinMs(limiter.consume('key_hung', 1, 10, 60), 3_000)).toMatchObject({ allowed: false, resetMs: CLOSED_RETRY_MS });
        expect(String(failures[0])).toMatch(/timed out/i);
      } finally {
        await proxy.stop();
      }
    });
  });

  describe('redis limiter when Redis cannot be reached', () => {
    it("fails open onto this instance's own in-memory windows: reports each decision, does not wait for Redis", async () => {
      const failures: unknown[] = [];
      const { limiter } = limiterOn(REFUSED_URL, { onFailure: 'open', onBackendError: (error) => failures.push(error) });
      const decisions = await withinMs(Promise.all([limiter.consume('k', 1, 5, 60), limiter.consume('k', 3, 5, 60)]), 3_000);
      expect(decisions.map(({ allowed, remaining }) => ({ allowed, remaining }))).toEqual([
        { allowed: true, remaining: 4 },
        { allowed: true, remaining: 1 },
      ]);
      // The window is counted, not merely admitted: past the limit, refused.
      const refused = await withinMs(limiter.consume('k', 2, 5, 60), 3_000);
      expect(refused).toMatchObject({ allowed: false, limit: 5, remaining: 0 });
      expect(refused.resetMs).toBeGreaterThan(50_000);
      // Exactly the limit out of many, on this instance.
      const flood = await withinMs(Promise.all(Array.from({ length: 150 }, () => limiter.consume('flood', 1, 50, 60))), 3_000);
      expect(flood.filter((decision) => decision.allowed)).toHaveLength(50);
      expect(failures).toHaveLength(153);
      expect(String(failures[0])).toContain(REDIS_FALLBACK_ERROR);
    });

    it('fails open but still refuses a request larger than the whole limit', async () => {
      const { limiter } = limiterOn(REFUSED_URL, { onFailure: 'open' });
      expect(await withinMs(limiter.consume('k', 6, 5, 60), 3_000)).toEqual({ allowed: false, limit: 5, remaining: 0, resetMs: 60_000 });
    });

    it('fails closed: refuses with a short retry hint', async () => {
      const failures: unknown[] = [];
      const { limiter } = limiterOn(REFUSED_URL, { onFailure: 'closed', onBackendError: (error) => failures.push(error) });
      const decision = await withinMs(limiter.consume('k', 1, 5, 60), 3_000);
      expect(decision).toEqual({ allowed: false, limit: 5, remaining: 0, resetMs: CLOSED_RETRY_MS });
      expect(failures).toHaveLength(1);
    });

    it('does not hang on a server that accepts connections but never answers', async () => {
      const silent = createServer(() => {});
      const sockets = new Set<Socket>();
      silent.on('connection', (socket) => sockets.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const port = (silent.address() as AddressInfo).port;
        const failures: unknown[] = [];
        const { limiter } = limiterOn(`redis://127.0.0.1:${port}`, { onFailure: 'closed', onBackendError: (error) => failures.push(error) });
        // Give the client time to connect, so the command really goes to the silent server's socket.
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect((await withinMs(limiter.consume('k', 1, 5, 60), 3_000)).allowed).toBe(false);
        expect(failures).toHaveLength(1);
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      }
    });

    it('close() ends the client even though it never connected', async () => {
      const client = createRedisClient(REFUSED_URL);
      const limiter = createRedisLimiter(client, { onFailure: 'open' });
      await withinMs(limiter.close(), 3_000);
      expect(client.status).toBe('end');
      await closeRedisClient(client);
    });
  });
});
