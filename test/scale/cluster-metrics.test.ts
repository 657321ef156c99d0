/**
 * `/metrics` of `serve --workers 2` (the built gateway, real processes) is the whole server's:
 * requests spread over both workers add up on every scrape, whichever worker takes it.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { testCatalog } from '../support/catalog.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startGatewayProcess, writeCatalog, type GatewayProcess } from '../support/gateway-process.js';
import { sampleSum } from '../support/prometheus.js';

/** One request on a connection of its own, so that the cluster hands each to the next worker (round robin). */
function send(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}${path}`, { method, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

async function scrape(base: string): Promise<string> {
  const answer = await send(base, 'GET', '/metrics');
  expect(answer.status).toBe(200);
  return answer.text;
}

describe('serve --workers 2: /metrics', () => {
  let database: TestDatabase;
  let store: Store;
  let gateway: GatewayProcess;
  let secret: string;
  let accountId: string;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    store = await openStore(database.url);
    const account = await createAccount(store, { name: 'cluster-metrics', balanceUsd: '10' }, CLI_ACTOR);
    accountId = account.id;
    secret = (await createKey(store, { accountRef: account.id }, CLI_ACTOR)).secret;
    gateway = await startGatewayProcess({ TOLLGATE_DATABASE_URL: database.url, TOLLGATE_CONFIG: writeCatalog(testCatalog()) }, ['--workers', '2']);
    // The banner comes with the first worker listening; wait for the second.
    const deadline = Date.now() + 20_000;
    while (sampleSum(await scrape(gateway.baseUrl), 'tollgate_processes') !== 2) {
      if (Date.now() > deadline) throw new Error(`the second worker never reported:\n${gateway.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await store?.close();
    await database?.drop();
  }, 30_000);

  it('adds up requests spread over both workers, on every scrape', async () => {
    const count = 20;
    const body = JSON.stringify({ model: 'model-5.6-mini', messages: [{ role: 'user', content: 'count me' }], max_tokens: 20 });
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    for (let index = 0; index < count; index += 1) {
      const answer = await send(gateway.baseUrl, 'POST', '/v1/chat/completions', headers, body);
      expect(answer.status).toBe(200);
    }
    const charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toHaveLength(count);
    const inputTokens = charges.reduce((sum, charge) => sum + charge.inputTokens, 0);
    const cost = charges.reduce((sum, charge) => sum + charge.amountNanos, 0n);
    // Each scrape lands on the next worker; one worker's own registry would hold about half.
    for (let scrapes = 0; scrapes < 4; scrapes += 1) {
      const text = await scrape(gateway.baseUrl);
      expect(sampleSum(text, 'tollgate_processes')).toBe(2);
      expect(sampleSum(text, 'tollgate_answers_total', { route: '/v1/chat/completions', code: 'ok' })).toBe(count);
      expect(sampleSum(text, 'tollgate_request_duration_seconds_count', { surface: 'chat', model: 'model-5.6-mini', status: '200' })).toBe(count);
      expect(sampleSum(text, 'tollgate_tokens_total', { model: 'model-5.6-mini', kind: 'input' })).toBe(inputTokens);
      expect(sampleSum(text, 'tollgate_cost_nanos_total', { model: 'model-5.6-mini' })).toBe(Number(cost));
      // Every hold was opened and settled through group-committed transactions: 2 operations per request (and any checkpoints).
      expect(sampleSum(text, 'tollgate_hold_batch_operations_sum')).toBeGreaterThanOrEqual(2 * count);
      expect(sampleSum(text, 'tollgate_hold_batch_operations_count')).toBeGreaterThan(0);
    }
  });
});
