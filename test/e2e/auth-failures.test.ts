/**
 * A flood of made-up keys must not reach the database beyond a bound, nor lock out valid keys:
 * each client address gets `rate_limits.auth_failures_per_minute` failed authentications (401),
 * then the spec's 429; only failures count, so a valid key is served from any address. The
 * database is protected by each process's budget of lookups (`rate_limits.auth_lookups_per_second`),
 * past which the answer is the spec's 429 before any lookup; repeated bad keys are answered from a
 * bounded cache. Real gateways on loopback (several loopback addresses stand for several clients),
 * the real store wrapped only to count its key lookups.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { displayPrefix, generateKeySecret, hashKeySecret, newId } from '../../src/auth/key-secret.js';
import { parseConfig } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/server/gateway.js';
import type { Limiter } from '../../src/ratelimit/limiter.js';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.js';
import { createRedisClient, waitForRedis } from '../../src/ratelimit/redis-client.js';
import { createRedisLimiter } from '../../src/ratelimit/redis-limiter.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { testCatalog } from '../support/catalog.js';
import { createTestDatabase, engines, redisUrl, type TestDatabase } from '../support/databases.js';
import { httpFrom } from '../support/http-from.js';

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

async function startGateway(limiter: Limiter, rateLimits: Record<string, unknown> = {}, now?: () => number): Promise<Running> {
  const catalog = testCatalog() as { rate_limits: Record<string, unknown> };
  Object.assign(catalog.rate_limits, rateLimits);
  const config = parseConfig(catalog, 'auth test catalog');
  const gateway = await createGateway({ config, store: countingLookups(store!), limiter, logger: pino({ level: 'silent' }), env: {}, ...(now === undefined ? {} : { now }) });
  const address = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  const started = { baseUrl: address.replace('localhost', '127.0.0.1'), gateway, limiter };
  running.push(started);
  return started;
}

async function newKey(): Promise<{ accountId: string; secret: string }> {
  const account = await createAccount(store!, { name: `acct-${randomUUID()}`, balanceUsd: '10' }, CLI_ACTOR);
  return { accountId: account.id, secret: (await createKey(store!, { accountRef: account.id }, CLI_ACTOR)).secret };
}

/** Asks for the model list as a client at loopback address `from` (127.0.0.x). */
async function ask(target: Running, secret: string | null, from = '127.0.0.1'): Promise<{ status: number; body: string; retryAfter: string | undefined }> {
  const answer = await httpFrom(`${target.baseUrl}/v1/models`, { from, headers: secret === null ? {} : { authorization: `Bearer ${secret}` } });
  const retryAfter = answer.headers['retry-after'];
  return { status: answer.status, body: answer.body, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined };
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
  it('an address gets 401 for its first 30 bad keys, then 429; its own new keys, cached keys and other addresses are unaffected', async () => {
    await setUp(engine);
    // Before the gateway starts: a key change later would empty its key cache (revision poll).
    const sameAddress = await newKey();
    const otherAddress = await newKey();
    const target = await startGateway(createMemoryLimiter());
    // Cached before the flood.
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
    // Each made-up key was looked up once: within this process's budget of lookups, an address
    // past its allowance is still looked up, so that its valid keys are not refused.
    expect(lookups).toBe(200);

    // Once past the limit the order is kept, with the 429 in the key step: a missing key is still a 401.
    expect((await ask(target, null, '127.0.0.1')).status).toBe(401);
    expect((await ask(target, sameAddress.secret, '127.0.0.1')).status).toBe(200);
    // A key the flooded address never used before: looked up, and served.
    expect((await ask(target, (await newKey()).secret, '127.0.0.1')).status).toBe(200);
    // Another client, with a key never seen before: looked up, and served.
    expect((await ask(target, otherAddress.secret, '127.0.0.2')).status).toBe(200);
    expect((await ask(target, badToken(), '127.0.0.2'))).toMatchObject({ status: 401, body: INVALID_TOKEN });
    expect(lookups).toBe(203);
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

describe.each(engines)('the lookup budget on %s', (engine) => {
  /** The gateway's clock, stopped: a second of the budget ends only when the test says so. */
  let clock = 0;
  const startBudgeted = () => startGateway(createMemoryLimiter(), { auth_failures_per_minute: 3, auth_lookups_per_second: 10 }, () => clock);
  const expectRateLimited = (answer: { status: number; body: string; retryAfter: string | undefined }) => {
    expect(answer).toMatchObject({ status: 429, body: RATE_LIMITED });
    expect(answer.retryAfter).toBe('1');
  };

  it('made-up keys from many addresses: the database sees at most the budget per second, the rest get the 429', async () => {
    await setUp(engine);
    clock = Date.now();
    const target = await startBudgeted();
    // 60 distinct made-up keys, 3 from each of 20 addresses: every address within its allowance.
    const answers = (
      await Promise.all(Array.from({ length: 20 }, (_, index) => floodBadTokens(target, 3, `127.0.1.${index + 1}`)))
    ).flat();
    expect(lookups).toBe(10);
    const refused = answers.filter((answer) => answer.status === 401);
    expect(refused).toHaveLength(10);
    for (const answer of refused) expect(answer.body).toBe(INVALID_TOKEN);
    const limited = answers.filter((answer) => answer.status !== 401);
    expect(limited).toHaveLength(50);
    for (const answer of limited) expectRateLimited(answer);
    // The next second has a budget of its own.
    clock += 1_000;
    expect(await ask(target, badToken(), '127.0.1.30')).toMatchObject({ status: 401, body: INVALID_TOKEN });
    expect(lookups).toBe(11);
  }, 60_000);

  it('an address past its allowance uses only the open half; the rest is kept for the others, and known keys need none', async () => {
    await setUp(engine);
    clock = Date.now();
    const cached = await newKey();
    const fresh = await newKey();
    const target = await startBudgeted();
    expect((await ask(target, cached.secret, '127.0.2.1')).status).toBe(200);
    clock += 1_000;
    lookups = 0;
    // One address: three failures (its allowance), two more looked up (429: past its allowance),
    // then the open half (5) is spent and the rest of the second is not for this address.
    const flooder = [];
    for (let index = 0; index < 8; index += 1) flooder.push(await ask(target, badToken(), '127.0.2.2'));
    expect(flooder.map((answer) => answer.status)).toEqual([401, 401, 401, 429, 429, 429, 429, 429]);
    for (const answer of flooder.slice(3)) expect(answer.body).toBe(RATE_LIMITED);
    expect(lookups).toBe(5);
    // Five other addresses get the kept half ...
    for (let index = 0; index < 5; index += 1) expect(await ask(target, badToken(), `127.0.2.${10 + index}`)).toMatchObject({ status: 401, body: INVALID_TOKEN });
    expect(lookups).toBe(10);
    // ... and then the second's budget is spent, for made-up and new keys alike; a cached key needs none.
    expectRateLimited(await ask(target, badToken(), '127.0.2.20'));
    expectRateLimited(await ask(target, fresh.secret, '127.0.2.21'));
    expect(lookups).toBe(10);
    expect((await ask(target, cached.secret, '127.0.2.2')).status).toBe(200);
    clock += 1_000;
    expect((await ask(target, fresh.secret, '127.0.2.21')).status).toBe(200);
    expect(lookups).toBe(11);
  }, 60_000);
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
    // Every made-up key was looked up (each instance's budget of lookups was far from spent).
    expect(lookups).toBe(40);
    const valid = await newKey();
    expect((await ask(second, valid.secret, '127.0.0.8')).status).toBe(200);
  }, 60_000);
});
