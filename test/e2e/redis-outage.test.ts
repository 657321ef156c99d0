/**
 * Redis away with `on_backend_failure: open`: each instance falls back to its own in-memory
 * limits (150 requests against 50 a minute → exactly 50 admitted per instance), the outage is
 * logged once rather than once per request, every decision is still counted in the metrics, and
 * a line says when Redis is back. `closed` keeps refusing. Two real gateways per case, built the
 * way `serve` builds them (setUpLimits), on a real SQLite database.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { parseConfig } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/server/gateway.js';
import { setUpLimits, type LimitsSetup } from '../../src/server/limits-setup.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';
import { OUTAGE_MESSAGES } from '../../src/ratelimit/outage-log.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { testCatalog } from '../support/catalog.js';
import { createTestDatabase, redisUrl, type TestDatabase } from '../support/databases.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/** A loopback port nothing listens on: connections are refused at once. */
const CLOSED_PORT_URL = 'redis://127.0.0.1:1';
const LIMIT = 50;

interface Instance {
  baseUrl: string;
  gateway: Gateway;
  limits: LimitsSetup;
  metrics: Metrics;
  logs: Array<Record<string, unknown>>;
}

let database: TestDatabase | undefined;
let store: Store | undefined;
let proxy: TcpProxy | undefined;
const instances: Instance[] = [];

afterEach(async () => {
  for (const instance of instances.splice(0)) {
    await instance.gateway.close();
    await instance.limits.close();
  }
  await proxy?.stop();
  await store?.close();
  await database?.drop();
  proxy = store = database = undefined;
});

async function setUp(policy: 'open' | 'closed'): Promise<{ secret: string; config: ReturnType<typeof parseConfig> }> {
  database = await createTestDatabase('sqlite');
  store = await openStore(database.url);
  const account = await createAccount(store, { name: 'outage', balanceUsd: '100' }, CLI_ACTOR);
  const { secret } = await createKey(store, { accountRef: account.id }, CLI_ACTOR);
  const catalog = testCatalog({ requestsPerWindow: LIMIT }) as { rate_limits: Record<string, unknown> };
  catalog.rate_limits.on_backend_failure = policy;
  // Only the requests window is consulted, so the failures metric counts one decision per request:
  // a valid key never consults the failed-authentication limit, not even on a key-cache miss.
  return { secret, config: parseConfig(catalog, 'outage catalog') };
}

async function startInstance(config: ReturnType<typeof parseConfig>, url: string): Promise<Instance> {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const metrics = createMetrics();
  const limits = await setUpLimits({ TOLLGATE_REDIS_URL: url }, config, { clusterWorker: false, logger, metrics });
  // Instances of one deployment share their seal key (README, Environment); without one, each warns once.
  const gateway = await createGateway({ config, store: store!, limiter: limits.limiter, logger, env: { TOLLGATE_SEAL_KEY: Buffer.alloc(32, 7).toString('base64') }, metrics });
  const address = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  const instance = { baseUrl: address.replace('localhost', '127.0.0.1'), gateway, limits, metrics, logs };
  instances.push(instance);
  return instance;
}

function ask(instance: Instance, secret: string): Promise<Response> {
  return fetch(`${instance.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'model-5.6-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });
}

/** Sends `count` requests, 25 at a time; returns the status codes (429 bodies checked). */
async function flood(instance: Instance, secret: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let sent = 0; sent < count; sent += 25) {
    const answers = await Promise.all(Array.from({ length: Math.min(25, count - sent) }, () => ask(instance, secret)));
    for (const answer of answers) {
      statuses.push(answer.status);
      const body = (await answer.json()) as { error?: { message: string } };
      if (answer.status === 429) {
        expect(body.error?.message).toBe('Rate limit exceeded.');
        expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
    }
  }
  return statuses;
}

const admitted = (statuses: number[]) => statuses.filter((status) => status === 200).length;
const linesSaying = (instance: Instance, message: string) => instance.logs.filter((line) => String(line.msg).startsWith(message));

async function failuresCounted(instance: Instance, policy: string): Promise<number> {
  const metric = await instance.metrics.limiterFailures.get();
  return metric.values.find((value) => value.labels.policy === policy)?.value ?? 0;
}

describe('rate limits while Redis cannot be reached', () => {
  it('open: each instance admits exactly its own limit, logs the outage once, counts every decision', async () => {
    const { secret, config } = await setUp('open');
    const first = await startInstance(config, CLOSED_PORT_URL);
    const second = await startInstance(config, CLOSED_PORT_URL);
    const [a, b] = await Promise.all([flood(first, secret, 150), flood(second, secret, 150)]);
    expect(admitted(a)).toBe(LIMIT);
    expect(admitted(b)).toBe(LIMIT);
    expect(a.filter((status) => status === 429)).toHaveLength(100);
    for (const instance of [first, second]) {
      expect(linesSaying(instance, OUTAGE_MESSAGES.started)).toHaveLength(1);
      expect(linesSaying(instance, OUTAGE_MESSAGES.ongoing)).toHaveLength(0);
      expect(await failuresCounted(instance, 'open')).toBe(150);
      // No stack traces: one line per problem, with its reason.
      expect(JSON.stringify(instance.logs)).not.toContain('"stack"');
      expect(instance.logs.filter((line) => line.level === 40).length).toBeLessThanOrEqual(5);
    }
  }, 60_000);

  it('closed: refuses every request with 429, logs the outage once, counts every decision', async () => {
    const { secret, config } = await setUp('closed');
    const instance = await startInstance(config, CLOSED_PORT_URL);
    const statuses = await flood(instance, secret, 150);
    expect(statuses.every((status) => status === 429)).toBe(true);
    expect(linesSaying(instance, OUTAGE_MESSAGES.started)).toHaveLength(1);
    expect(String(linesSaying(instance, OUTAGE_MESSAGES.started)[0]?.msg)).toContain('refused with 429');
    expect(await failuresCounted(instance, 'closed')).toBe(150);
  }, 60_000);
});

describe.skipIf(!redisUrl)('rate limits when Redis goes away and comes back', () => {
  it('open: shared while Redis answers, exactly the limit per instance while it is away, shared again after', async () => {
    const { secret, config } = await setUp('open');
    proxy = await startTcpProxy(new URL(redisUrl ?? ''));
    const through = `redis://127.0.0.1:${proxy.port}`;
    const first = await startInstance(config, through);
    const second = await startInstance(config, through);

    // Redis counts both instances in one window: 10 + 10 of 50.
    expect(admitted(await flood(first, secret, 10))).toBe(10);
    expect(admitted(await flood(second, secret, 10))).toBe(10);
    const shared = await ask(first, secret);
    expect(shared.headers.get('x-ratelimit-remaining-requests')).toBe(String(LIMIT - 21));
    for (const instance of [first, second]) expect(linesSaying(instance, OUTAGE_MESSAGES.started)).toHaveLength(0);

    await proxy.stop();
    const [a, b] = await Promise.all([flood(first, secret, 150), flood(second, secret, 150)]);
    expect(admitted(a)).toBe(LIMIT);
    expect(admitted(b)).toBe(LIMIT);
    for (const instance of [first, second]) {
      expect(linesSaying(instance, OUTAGE_MESSAGES.started)).toHaveLength(1);
      expect(await failuresCounted(instance, 'open')).toBe(150);
    }

    await proxy.start();
    // Back in Redis's window (21 used before the cut; nothing admitted meanwhile was recorded there).
    let remaining: string | null = null;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      const answer = await ask(first, secret);
      await answer.arrayBuffer();
      if (answer.status === 200) {
        remaining = answer.headers.get('x-ratelimit-remaining-requests');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(remaining).toBe(String(LIMIT - 22));
    expect(linesSaying(first, OUTAGE_MESSAGES.ended)).toHaveLength(1);
    expect(linesSaying(first, OUTAGE_MESSAGES.started)).toHaveLength(1);
    expect(JSON.stringify(first.logs)).not.toContain('"stack"');
  }, 60_000);
});
