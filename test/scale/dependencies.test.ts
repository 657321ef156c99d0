/**
 * When a dependency fails, on real gateway processes: an unreachable Redis makes limits fail open
 * (logged and counted) or closed, by config; a second instance without shared limits refuses to
 * start unless the operator accepts per-instance limits; a database that goes away gives the spec's
 * 503 format, and a bill left unsettled by the outage is settled once when it comes back.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { testCatalog } from '../support/catalog.js';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../support/databases.js';
import { startGatewayProcess, writeCatalog, type GatewayProcess } from '../support/gateway-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const chat = { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 };

function post(base: string, secret: string, body: object): Promise<Response> {
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function newKey(store: Store, balanceUsd = '5'): Promise<{ accountId: string; secret: string }> {
  const account = await createAccount(store, { name: `deps-${Math.random().toString(36).slice(2)}`, balanceUsd }, CLI_ACTOR);
  const { secret } = await createKey(store, { accountRef: account.id }, CLI_ACTOR);
  return { accountId: account.id, secret };
}

describe('dependencies on SQLite', () => {
  let database: TestDatabase;
  let store: Store;
  const started: GatewayProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    store = await openStore(database.url);
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((process) => process.stop()));
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  const catalogWith = (policy: 'open' | 'closed') =>
    writeCatalog({ ...(testCatalog() as Record<string, unknown>), rate_limits: { requests: 100, window_seconds: 60, on_backend_failure: policy } });

  it('Redis unreachable: limits fail open by default, and it is counted', async () => {
    const gateway = await startGatewayProcess({ TOLLGATE_DATABASE_URL: database.url, TOLLGATE_CONFIG: catalogWith('open'), TOLLGATE_REDIS_URL: 'redis://127.0.0.1:1' });
    started.push(gateway);
    const { secret } = await newKey(store);
    for (let i = 0; i < 3; i++) expect((await post(gateway.baseUrl, secret, chat)).status).toBe(200);
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    const failures = /tollgate_rate_limit_backend_failures_total\{policy="open"\} (\d+)/.exec(metrics);
    expect(Number(failures?.[1])).toBeGreaterThanOrEqual(3);
  });

  it('Redis unreachable with on_backend_failure: closed gives the spec 429', async () => {
    const gateway = await startGatewayProcess({ TOLLGATE_DATABASE_URL: database.url, TOLLGATE_CONFIG: catalogWith('closed'), TOLLGATE_REDIS_URL: 'redis://127.0.0.1:1' });
    started.push(gateway);
    const { secret } = await newKey(store);
    const refused = await post(gateway.baseUrl, secret, chat);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toBe('{"error":{"message":"Rate limit exceeded.","type":"service_api_error","code":""}}');
  });

  it('without Redis a second instance refuses to start, unless per-instance limits are accepted', async () => {
    const env = { TOLLGATE_DATABASE_URL: database.url, TOLLGATE_CONFIG: catalogWith('open') };
    started.push(await startGatewayProcess(env));
    const refused = await startGatewayProcess(env).then(
      (process) => {
        started.push(process);
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/exited with 1/);
    expect(refused).toMatch(/TOLLGATE_REDIS_URL/);
    expect(refused).toMatch(/TOLLGATE_ACCEPT_LOCAL_LIMITS=1/);
    started.push(await startGatewayProcess({ ...env, TOLLGATE_ACCEPT_LOCAL_LIMITS: '1' }));
    expect(started).toHaveLength(2);
  });
});

describe.skipIf(!postgresUrl)('the database goes away (PostgreSQL behind a proxy)', () => {
  let database: TestDatabase;
  let store: Store;
  let proxy: TcpProxy;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    store = await openStore(database.url);
    proxy = await startTcpProxy(new URL(database.url));
    const viaProxy = new URL(database.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const catalog = { ...(testCatalog() as Record<string, unknown>), billing: { hold_ttl_seconds: 120 } };
    gateway = await startGatewayProcess({ TOLLGATE_DATABASE_URL: viaProxy.toString(), TOLLGATE_CONFIG: writeCatalog(catalog), TOLLGATE_LOG_LEVEL: 'error' });
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await proxy?.stop();
    await store?.close();
    await database?.drop();
  }, 60_000);

  it('refuses with a clear 503 while it is away; the bill of a stream cut off from it settles once when it is back', async () => {
    const { accountId, secret } = await newKey(store);
    expect((await post(gateway.baseUrl, secret, chat)).status).toBe(200);

    const streaming = await post(gateway.baseUrl, secret, { model: 'slow-model', messages: [{ role: 'user', content: 'long' }], stream: true });
    const requestId = streaming.headers.get('x-request-id');
    const reader = streaming.body!.getReader();
    await reader.read();
    await proxy.stop();

    const refused = await post(gateway.baseUrl, secret, chat).catch((error: unknown) => {
      throw new Error(`the gateway died when the database went away:\n${gateway.output()}`, { cause: error });
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.text()).toBe(
      '{"error":{"message":"The service is temporarily unavailable; retry with backoff.","type":"service_api_error","code":"service_unavailable"}}',
    );
    while (!(await reader.read()).done);
    await sleep(300);
    expect((await store.listLedger(accountId)).filter((entry) => entry.requestId === requestId)).toHaveLength(0);

    await proxy.start();
    const deadline = Date.now() + 20_000;
    let charges = 0;
    while (Date.now() < deadline) {
      charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge' && entry.requestId === requestId).length;
      if (charges > 0) break;
      await sleep(200);
    }
    expect(charges).toBe(1);
    expect((await post(gateway.baseUrl, secret, chat)).status).toBe(200);
    await sleep(1500);
    expect((await store.listLedger(accountId)).filter((entry) => entry.requestId === requestId)).toHaveLength(1);
    expect(await store.countOpenHolds(accountId)).toBe(0);
  }, 60_000);
});
