/**
 * A flood of made-up keys must not reach the database beyond a bound, nor slow down valid keys:
 * each client address gets `rate_limits.auth_failures_per_minute` failed authentications (401),
 * then the spec's 429 before any lookup; repeated bad keys are answered from a bounded cache.
 * Real gateways on loopback (several loopback addresses stand for several clients), the real store
 * wrapped only to count its key lookups.
 */
import { randomUUID } from 'node:crypto';
import { get as httpGet } from 'node:http';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { createKey } from '../../src/admin/keys.js';
import { displayPrefix, generateKeySecret, hashKeySecret, newId } from '../../src/auth/key-secret.js';
import { parseConfig } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/http/gateway.js';
import type { Limiter } from '../../src/ratelimit/limiter.js';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.js';
import { createRedisClient, waitForRedis } from '../../src/ratelimit/redis-client.js';
import { createRedisLimiter } from '../../src/ratelimit/redis-limiter.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { testCatalog } from '../support/catalog.js';
import { createTestDatabase, engines, redisUrl, type TestDatabase } from '../support/databases.js';

const INVALID_TOKEN = '{"error":{"message":"Invalid token.","type":"service_api_error","code":""}}';
const RATE_LIMITED = '{"error":{"message":"Rate limit exceeded.","type":"service_api_error","code":""}}';

interface Running {
  baseUrl: string;
  gateway: Gateway;
  limiter: Limiter;
}

let database: TestDatabase | undefined;
let store: Store | undefined;
let lookups = 0;
const running: Running[] = [];

afterEach(async () => {
  for (const { gateway, limiter } of running.splice(0)) {
    await gateway.close();
    await limiter.close();
  }
  await store?.close();
  await database?.drop();
  store = database = undefined;
});

/** The real store, counting key lookups (what would be a query each). */
function countingLookups(real: Store): Store {
  return new Proxy(real, {
    get(target, property, receiver) {
      if (property === 'findKeyByHash') {
        return (hash: string) => {
          lookups += 1;
          return target.findKeyByHash(hash);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function setUp(engine: 'sqlite' | 'postgres'): Promise<void> {
  lookups = 0;
  database = await createTestDatabase(engine);
  store = await openStore(database.url);
}

async function startGateway(limiter: Limiter, rateLimits: Record<string, unknown> = {}): Promise<Running> {
  const catalog = testCatalog() as { rate_limits: Record<string, unknown> };
  Object.assign(catalog.rate_limits, rateLimits);
  const config = parseConfig(catalog, 'auth test catalog');
  const gateway = await createGateway({ config, store: countingLookups(store!), limiter, logger: pino({ level: 'silent' }), env: {} });
  const address = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  const started = { baseUrl: address.replace('localhost', '127.0.0.1'), gateway, limiter };
  running.push(started);
  return started;
}

async function newKey(): Promise<{ accountId: string; secret: string }> {
  const account = await createAccount(store!, { name: `acct-${randomUUID()}`, balanceUsd: '10' });
  return { accountId: account.id, secret: (await createKey(store!, { accountRef: account.id })).secret };
}

/** Asks for the model list as a client at loopback address `from` (127.0.0.x). */
function ask(target: Running, secret: string | null, from = '127.0.0.1'): Promise<{ status: number; body: string; retryAfter: string | undefined }> {
  const url = new URL(`${target.baseUrl}/v1/models`);
  return new Promise((resolve, reject) => {
    const outgoing = httpGet(
      { host: url.hostname, port: url.port, path: url.pathname, localAddress: from, agent: false, headers: secret === null ? {} : { authorization: `Bearer ${secret}` } },
      (answer) => {
        let body = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => (body += chunk));
        answer.on('end', () => {
          const retryAfter = answer.headers['retry-after'];
          resolve({ status: answer.statusCode ?? 0, body, retryAfter });
        });
      },
    );
    outgoing.on('error', reject);
  });
}

const badToken = () => `sk-tg-${randomUUID().replaceAll('-', '')}`;

async function floodBadTokens(target: Running, count: number, from: string): Promise<Array<{ status: number; body: string; retryAfter: string | undefined }>> {
  const answers = [];
  for (let sent = 0; sent < count; sent += 20) {
    answers.push(...(await Promise.all(Array.from({ length: Math.min(20, count - sent) }, () => ask(target, badToken(), from)))));
  }
  return answers;
}

describe.each(engines)('failed authentications on %s', (engine) => {
  it('an address gets 401 for its first 30 bad keys, then 429 without a lookup; other addresses and cached keys are unaffected', async () => {
    await setUp(engine);
    // Before the gateway starts: a key change later would empty its key cache (revision poll).
    const sameAddress = await newKey();
    const otherAddress = await newKey();
    const target = await startGateway(createMemoryLimiter());
    // Cached before the flood: a key already known keeps working from the flooded address.
    expect((await ask(target, sameAddress.secret)).status).toBe(200);
    lookups = 0;

    const answers = await floodBadTokens(target, 200, '127.0.0.1');
    const refused = answers.filter((answer) => answer.status === 401);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(30);
    expect(limited).toHaveLength(170);
    for (const answer of refused) expect(answer.body).toBe(INVALID_TOKEN);
    for (const answer of limited) {
      expect(answer.body).toBe(RATE_LIMITED);
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(answer.retryAfter)).toBeLessThanOrEqual(60);
    }
    // At most the limit reached the database.
    expect(lookups).toBe(30);

    // Once past the limit the order is kept, with the 429 in the key step: a missing key is still a 401.
    expect((await ask(target, null, '127.0.0.1')).status).toBe(401);
    expect((await ask(target, sameAddress.secret, '127.0.0.1')).status).toBe(200);
    // Another client, with a key never seen before: looked up, and served.
    expect((await ask(target, otherAddress.secret, '127.0.0.2')).status).toBe(200);
    expect((await ask(target, badToken(), '127.0.0.2'))).toMatchObject({ status: 401, body: INVALID_TOKEN });
    expect(lookups).toBe(32);
  }, 60_000);

  it('a repeated bad key is looked up once, and valid keys never count as failures', async () => {
    await setUp(engine);
    const target = await startGateway(createMemoryLimiter(), { auth_failures_per_minute: 3 });
    const repeated = badToken();
    for (let i = 0; i < 3; i++) expect((await ask(target, repeated, '127.0.0.4')).status).toBe(401);
    expect((await ask(target, repeated, '127.0.0.4')).status).toBe(429);
    expect(lookups).toBe(1);
    // Forty valid keys, each looked up once, from one address with a limit of three failures.
    for (let i = 0; i < 40; i++) expect((await ask(target, (await newKey()).secret, '127.0.0.5')).status).toBe(200);
    expect((await ask(target, badToken(), '127.0.0.5')).status).toBe(401);
  }, 60_000);

  it('a key created in another process after its token was refused works within a second', async () => {
    await setUp(engine);
    const target = await startGateway(createMemoryLimiter());
    const { accountId } = await newKey();
    const secret = generateKeySecret();
    expect((await ask(target, secret, '127.0.0.6')).status).toBe(401);
    expect((await ask(target, secret, '127.0.0.6')).status).toBe(401);
    expect(lookups).toBe(1);

    const other = await openStore(database!.url);
    try {
      await other.createKey({
        id: newId('key'),
        accountId,
        name: null,
        prefix: displayPrefix(secret),
        hash: hashKeySecret(secret),
        models: null,
        requestsPerWindow: null,
        tokensPerMinute: null,
        expiresAt: null,
        disabled: false,
        createdAt: new Date(),
      });
    } finally {
      await other.close();
    }
    const created = Date.now();
    let status = 0;
    while (Date.now() - created < 1_000 && status !== 200) {
      status = (await ask(target, secret, '127.0.0.6')).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(200);
  }, 30_000);
});

describe.skipIf(!redisUrl)('failed authentications across instances sharing Redis', () => {
  it('an address has one allowance for every instance', async () => {
    await setUp('sqlite');
    const keyPrefix = `tollgate-test:${randomUUID()}:`;
    const limiterOn = async () => {
      const client = createRedisClient(redisUrl ?? '');
      expect(await waitForRedis(client, 5_000)).toBe(true);
      return createRedisLimiter(client, { onFailure: 'closed', keyPrefix });
    };
    const first = await startGateway(await limiterOn());
    const second = await startGateway(await limiterOn());
    const answers = [...(await floodBadTokens(first, 20, '127.0.0.7')), ...(await floodBadTokens(second, 20, '127.0.0.7'))];
    expect(answers.filter((answer) => answer.status === 401)).toHaveLength(30);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(10);
    expect(lookups).toBe(30);
    const valid = await newKey();
    expect((await ask(second, valid.secret, '127.0.0.8')).status).toBe(200);
  }, 60_000);
});
