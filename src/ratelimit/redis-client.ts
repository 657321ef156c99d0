/**
 * The Redis connection the shared parts (rate limits, key-change events) run on. A Redis that is
 * down or hung must never make a request wait: commands fail at once while the client is not
 * connected (no offline queue) and after `commandTimeoutMs` when the server stops answering, and
 * the caller applies its failure policy. Reconnection carries on in the background.
 */
import { Redis } from 'ioredis';

export interface RedisClientOptions {
  /** Fail a command that has no reply after this long (default 500 ms; Redis answers in well under 1 ms). */
  commandTimeoutMs?: number;
  /** Give up on one connection attempt after this long (default 2 s); the next attempt follows. */
  connectTimeoutMs?: number;
  /**
   * Connection errors, reported once per outage (the first after being connected, then again
   * only when the message changes), not once per reconnection attempt.
   */
  onError?: (error: Error) => void;
  /**
   * Send the commands issued in one event-loop turn in one write (ioredis's auto-pipelining) rather
   * than one write each. On the request path every request asks the limiter once; under load many
   * requests are read in the same turn, and a write to a socket costs more than the command.
   */
  autoPipelining?: boolean;
}

/** A client for `url` (`redis://[:password@]host:port[/db]` or `rediss://…`) that never queues commands. */
export function createRedisClient(url: string, options: RedisClientOptions = {}): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    enableAutoPipelining: options.autoPipelining ?? false,
    commandTimeout: options.commandTimeoutMs ?? 500,
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    // A command caught by a dropped connection fails on the first reconnection attempt instead of
    // waiting for twenty of them.
    maxRetriesPerRequest: 1,
    // Retry forever, at most every 2 s: Redis coming back must heal the gateway without a restart.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  });
  let lastReported: string | undefined;
  // Without an 'error' listener ioredis prints every failed reconnection to stderr.
  client.on('error', (error: Error) => {
    if (error.message === lastReported) return;
    lastReported = error.message;
    options.onError?.(error);
  });
  client.on('ready', () => {
    lastReported = undefined;
  });
  return client;
}

/**
 * Resolves true once `client` is connected and ready, false when it is not within `timeoutMs`
 * (it keeps trying in the background). Startup awaits this so the first requests do not meet a
 * client still connecting.
 */
export function waitForRedis(client: Redis, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    client.once('ready', onReady);
  });
}

/** Closes `client` politely when connected, at once otherwise (QUIT would fail without a connection). */
export async function closeRedisClient(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // The connection dropped between the check and QUIT: fall through and cut it.
    }
  }
  // Between two attempts there is no socket to close and no 'end' to wait for: cancelling the
  // next attempt is all there is.
  const waiting = client.status === 'reconnecting' || client.status === 'wait' ? Promise.resolve() : endOf(client);
  client.disconnect();
  await waiting;
}

function endOf(client: Redis): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 1_000);
    client.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
