/**
 * `TOLLGATE_ADMIN_PORT`: the admin API on a listener of its own. There it answers; on the public
 * port it is an unknown route (the spec's 404), and /v1 is an unknown route on the admin listener.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminServerPort } from '../support/admin-client.js';
import { startGatewayProcess } from '../support/gateway-process.js';
import { startHarness, type Harness } from '../support/harness.js';
import { rawExchange } from '../support/raw-http.js';

/** A port free right now on loopback (the kernel's pick, released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

describe('admin API on its own listener', () => {
  let harness: Harness;
  let adminBase: string;
  let token: string;

  beforeAll(async () => {
    harness = await startHarness({ adminListener: true });
    adminBase = harness.adminBaseUrl ?? '';
    token = (await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR)).secret;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('listens on a port other than the public one', () => {
    expect(adminServerPort(adminBase)).not.toBe(adminServerPort(harness.baseUrl));
  });

  it('serves /admin/v1 there, with request ids and the error format', async () => {
    const created = await fetch(`${adminBase}/admin/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'on-the-admin-port', balance_usd: '1' }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toMatch(/^req_/);
    const refused = await fetch(`${adminBase}/admin/v1/accounts`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: { message: 'Invalid token.', type: 'service_api_error', code: '' } });
  });

  it('answers malformed HTTP, a missing Host and a refused Expect there in the spec\'s format too', async () => {
    const cases: Array<[string, number]> = [
      ['GET /admin/v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', 400],
      ['GET /admin/v1/accounts HTTP/1.1\r\n\r\n', 400],
      ['POST /admin/v1/accounts HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}', 417],
    ];
    for (const [payload, status] of cases) {
      const answer = await rawExchange(adminBase, payload);
      expect(answer.status).toBe(status);
      expect(answer.headers['x-request-id']).toMatch(/^req_/);
      const body = JSON.parse(answer.body) as { error: Record<string, unknown> };
      expect(Object.keys(body.error)).toEqual(expect.arrayContaining(['message', 'type', 'code']));
      expect(body.error.param).toBeUndefined();
    }
  });

  it('is an unknown route on the public port, even with a good token', async () => {
    const answer = await fetch(`${harness.baseUrl}/admin/v1/accounts`, { headers: { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(404);
    expect(answer.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await answer.json()).toEqual({ error: { message: 'Invalid URL (GET /admin/v1/accounts)', type: 'invalid_request_error', param: '', code: '' } });
  });

  it('keeps /v1 off the admin listener, and on the public port', async () => {
    const { secret } = await harness.newAccount('1');
    const onAdmin = await fetch(`${adminBase}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
    expect(onAdmin.status).toBe(404);
    expect(await onAdmin.json()).toEqual({ error: { message: 'Invalid URL (GET /v1/models)', type: 'invalid_request_error', param: '', code: '' } });
    const onPublic = await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
    expect(onPublic.status).toBe(200);
  });
});

describe('tollgate serve with TOLLGATE_ADMIN_PORT', () => {
  it('serves the admin API on that port only', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tollgate-admin-port-'));
    const port = await freePort();
    const gateway = await startGatewayProcess({ TOLLGATE_DATABASE_URL: `sqlite:${join(folder, 'tollgate.db')}`, TOLLGATE_CONFIG: '', TOLLGATE_ADMIN_PORT: String(port) });
    try {
      const onAdminPort = await fetch(`http://127.0.0.1:${port}/admin/v1/accounts`);
      expect(onAdminPort.status).toBe(401);
      const onPublicPort = await fetch(`${gateway.baseUrl}/admin/v1/accounts`);
      expect(onPublicPort.status).toBe(404);
      expect((await fetch(`${gateway.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      expect(await gateway.stop()).toBe(0);
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);
});
