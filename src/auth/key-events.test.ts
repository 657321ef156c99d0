/**
 * Key-change announcements over a real Redis (TOLLGATE_TEST_REDIS_URL); the unreachable-Redis
 * cases always run.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { closeRedisClient, createRedisClient, waitForRedis } from '../ratelimit/redis-client.js';
import { createKeyEvents, publishKeyChange } from './key-events.js';

const redisUrl = process.env.TOLLGATE_TEST_REDIS_URL;
if (!redisUrl) console.info('Key events suite on a real Redis skipped: set TOLLGATE_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379) to run it.');

const clients: Redis[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => closeRedisClient(client)));
});

function client(url: string): Redis {
  const made = createRedisClient(url);
  clients.push(made);
  return made;
}

/** A counter of calls, and a promise for the next call (rejected after `ms`). */
function calls() {
  let count = 0;
  let waiter: (() => void) | undefined;
  return {
    onChange: () => {
      count += 1;
      waiter?.();
    },
    get count() {
      return count;
    },
    next(ms: number): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no change announced within ${ms} ms`)), ms);
        waiter = () => {
          clearTimeout(timer);
          waiter = undefined;
          resolve();
        };
      });
    },
  };
}

describe.skipIf(!redisUrl)('key events on a real Redis', () => {
  const url = redisUrl ?? '';

  async function instance(channel: string) {
    const publisher = client(url);
    const subscriber = client(url);
    expect(await waitForRedis(publisher, 5_000)).toBe(true);
    expect(await waitForRedis(subscriber, 5_000)).toBe(true);
    return { events: createKeyEvents({ publisher, subscriber, channel }), publisher, subscriber };
  }

  it('delivers a change published by one instance to the others within a second', async () => {
    const channel = `tollgate-test:${randomUUID()}`;
    const [first, second, third] = await Promise.all([instance(channel), instance(channel), instance(channel)]);
    const seenBySecond = calls();
    const seenByThird = calls();
    await second!.events.subscribe(seenBySecond.onChange);
    await third!.events.subscribe(seenByThird.onChange);
    const arrivals = Promise.all([seenBySecond.next(1_000), seenByThird.next(1_000)]);
    await first!.events.publish();
    await arrivals;
    expect([seenBySecond.count, seenByThird.count]).toEqual([1, 1]);
    // The CLI's way: a lone publisher on the same channel.
    const again = Promise.all([seenBySecond.next(1_000), seenByThird.next(1_000)]);
    await publishKeyChange(first!.publisher, channel);
    await again;
    expect([seenBySecond.count, seenByThird.count]).toEqual([2, 2]);
  });

  it('stops delivering after unsubscribing', async () => {
    const channel = `tollgate-test:${randomUUID()}`;
    const [publishing, leaving, staying] = await Promise.all([instance(channel), instance(channel), instance(channel)]);
    const seenByLeaving = calls();
    const seenByStaying = calls();
    const unsubscribe = await leaving!.events.subscribe(seenByLeaving.onChange);
    await staying!.events.subscribe(seenByStaying.onChange);
    await unsubscribe();
    const arrival = seenByStaying.next(1_000);
    await publishing!.events.publish();
    await arrival;
    // Redis answered the UNSUBSCRIBE before the PUBLISH, so it had nobody to send it to on `leaving`.
    expect(seenByLeaving.count).toBe(0);
    expect(seenByStaying.count).toBe(1);
  });

  it('ignores messages of other channels on the same subscriber', async () => {
    const channel = `tollgate-test:${randomUUID()}`;
    const other = `${channel}:other`;
    const [publishing, subscribing] = await Promise.all([instance(channel), instance(channel)]);
    const seen = calls();
    await subscribing!.events.subscribe(seen.onChange);
    const otherMessages: string[] = [];
    await subscribing!.subscriber.subscribe(other);
    subscribing!.subscriber.on('message', (from: string) => otherMessages.push(from));
    await createKeyEvents({ publisher: publishing!.publisher, subscriber: publishing!.subscriber, channel: other }).publish();
    const arrival = seen.next(1_000);
    await publishing!.events.publish();
    await arrival;
    // Both messages reached the client, in order; only the key channel's was taken as a change.
    expect(otherMessages).toEqual([other, channel]);
    expect(seen.count).toBe(1);
  });

  it('presumes a change after the subscriber reconnects, and keeps receiving', async () => {
    const channel = `tollgate-test:${randomUUID()}`;
    const [publishing, subscribing] = await Promise.all([instance(channel), instance(channel)]);
    const seen = calls();
    await subscribing!.events.subscribe(seen.onChange);
    const afterReconnect = seen.next(5_000);
    subscribing!.subscriber.disconnect(true);
    await afterReconnect;
    expect(seen.count).toBe(1);
    const arrival = seen.next(1_000);
    await publishing!.events.publish();
    await arrival;
    expect(seen.count).toBe(2);
  });
});

describe('key events when Redis cannot be reached', () => {
  it('rejects a publish and subscribes later instead of hanging', async () => {
    const events = createKeyEvents({ publisher: client('redis://127.0.0.1:1'), subscriber: client('redis://127.0.0.1:1') });
    await expect(events.publish()).rejects.toThrow();
    const unsubscribe = await events.subscribe(() => undefined);
    await unsubscribe();
  });
});
