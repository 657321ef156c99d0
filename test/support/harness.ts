/**
 * Starts the real gateway on a loopback port, on a real database, with the official `openai`
 * client pointed at it. What `serve` does, minus the process-level parts.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { pino, type Logger } from 'pino';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey, type NewKeyInput } from '../../src/admin/keys.js';
import { parseConfig } from '../../src/config/load.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/server/gateway.js';
import type { RouterOptions } from '../../src/routing/router.js';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.js';
import { createRedisClient, waitForRedis } from '../../src/ratelimit/redis-client.js';
import { createRedisLimiter } from '../../src/ratelimit/redis-limiter.js';
import type { Limiter } from '../../src/ratelimit/limiter.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { testCatalog } from './catalog.js';
import { createTestDatabase, redisUrl, type TestDatabase } from './databases.js';

export interface Harness {
  baseUrl: string;
  /** With `adminListener`: where the admin API is served instead. */
  adminBaseUrl?: string;
  store: Store;
  gateway: Gateway;
  database: TestDatabase;
  /** A new account with `balanceUsd` and one key; returns the key's secret. */
  newAccount(balanceUsd: string, key?: Omit<NewKeyInput, 'accountRef'>): Promise<{ accountId: string; keyId: string; secret: string }>;
  client(secret: string, options?: { maxRetries?: number }): OpenAI;
  /** fetch against the gateway with the key (or no key when null). */
  post(path: string, body: string | object, secret: string | null, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  engine?: 'sqlite' | 'postgres';
  catalog?: unknown;
  limiter?: Limiter;
  env?: Record<string, string>;
  /** Where the gateway's pino logs go (silent by default). */
  logger?: Logger;
  /** Serve the admin API on a listener of its own (as TOLLGATE_ADMIN_PORT does). */
  adminListener?: boolean;
  /** Request log writer and pruning options (server/gateway.ts). */
  requestLog?: GatewayOptions['requestLog'];
  /** Target health settings (threshold, cool-down) and observers. */
  router?: RouterOptions;
  /** The gateway's clock (createGateway's `now`); the system clock by default. */
  now?: () => number;
  /** How often the gateway polls the store's revision (100 ms by default). */
  revisionPollMs?: number;
  /** How the gateway announces key changes made through its admin API (as `serve` does with Redis). */
  announceKeyChange?: () => Promise<void>;
  /** Another harness's database, to run a second instance on it (left for that harness to drop). */
  sharedDatabase?: TestDatabase;
}

/** Connected before use, as `serve` does: the client has no offline queue, and the limiter fails closed. */
async function redisLimiter(url: string): Promise<Limiter> {
  const client = createRedisClient(url);
  if (!(await waitForRedis(client, 5_000))) throw new Error(`Redis at ${url} is not reachable`);
  return createRedisLimiter(client, { onFailure: 'closed', keyPrefix: `tollgate-test:${randomUUID()}` });
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const database = options.sharedDatabase ?? (await createTestDatabase(options.engine ?? 'sqlite'));
  const store = await openStore(database.url);
  // On PostgreSQL with Redis configured, the suites run the way several instances would.
  const limiter = options.limiter ?? ((options.engine ?? 'sqlite') === 'postgres' && redisUrl !== undefined ? await redisLimiter(redisUrl) : createMemoryLimiter());
  const config = parseConfig(options.catalog ?? testCatalog(), 'test catalog');
  const logger = options.logger ?? pino({ level: process.env.TOLLGATE_TEST_LOG_LEVEL ?? 'silent' });
  const gateway = await createGateway({
    config,
    store,
    limiter,
    logger,
    env: options.env ?? {},
    revisionPollMs: options.revisionPollMs ?? 100,
    adminListener: options.adminListener === true,
    ...(options.router === undefined ? {} : { router: options.router }),
    ...(options.requestLog === undefined ? {} : { requestLog: options.requestLog }),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.announceKeyChange === undefined ? {} : { announceKeyChange: options.announceKeyChange }),
  });
  const address = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = address.replace('localhost', '127.0.0.1');
  const adminServer = gateway.adminServer;
  const adminBaseUrl = adminServer === undefined ? undefined : await new Promise<string>((resolve) => {
    adminServer.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(adminServer.address() as AddressInfo).port}`));
  });
  let accounts = 0;
  return {
    baseUrl,
    ...(adminBaseUrl === undefined ? {} : { adminBaseUrl }),
    store,
    gateway,
    database,
    async newAccount(balanceUsd, key = {}) {
      accounts += 1;
      const account = await createAccount(store, { name: `account-${accounts}-${Date.now()}`, balanceUsd }, CLI_ACTOR);
      const created = await createKey(store, { accountRef: account.id, ...key }, CLI_ACTOR);
      return { accountId: account.id, keyId: created.key.id, secret: created.secret };
    },
    client(secret, clientOptions = {}) {
      return new OpenAI({ apiKey: secret, baseURL: `${baseUrl}/v1`, maxRetries: clientOptions.maxRetries ?? 0, timeout: 15_000 });
    },
    post(path, body, secret, headers = {}) {
      return fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(secret === null ? {} : { authorization: `Bearer ${secret}` }), ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
    async close() {
      await gateway.close();
      await limiter.close();
      await store.close();
      if (options.sharedDatabase === undefined) await database.drop();
    },
  };
}
