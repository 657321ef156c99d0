/**
 * Tells running instances that a key changed, through Redis when `TOLLGATE_REDIS_URL` is set, so
 * they drop their key cache at once. Without Redis (or when it is down) they still notice within a
 * second through the store's revision counter, so a failure here is only a warning.
 */
import { publishKeyChange } from '../auth/key-events.js';
import { ENV } from '../config/env.js';
import type { CliIo } from './cli-io.js';

export async function announceKeyChange(io: CliIo): Promise<void> {
  const url = io.env[ENV.redisUrl];
  if (url === undefined || url === '') return;
  // Loaded only with Redis (docs/architecture.md, "What a process loads").
  const { closeRedisClient, createRedisClient, waitForRedis } = await import('../ratelimit/redis-client.js');
  const client = createRedisClient(url);
  try {
    if (await waitForRedis(client, 2_000)) await publishKeyChange(client);
    else io.stderr('warning: Redis is not reachable; running instances will notice the change within a second.\n');
  } catch {
    io.stderr('warning: could not announce the change through Redis; running instances will notice it within a second.\n');
  } finally {
    await closeRedisClient(client);
  }
}
