/**
 * What a key holder's console session may do, over HTTP: read its own account, key and models
 * (/console/api/self), and nothing of the operators'. Every route of the admin API's OpenAPI
 * document is called with the session, with real ids in its path (another account's among them):
 * each one answers 403 and changes nothing.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { formatUsd } from '../../src/billing/money.js';
import { consoleCookie, signIn } from '../support/console-session.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const run = promisify(execFile);
const hasCurl = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

interface OpenApiDocument {
  paths: Record<string, Record<string, { tags?: string[] }>>;
}

describe.each(engines)("a key holder's session on %s", (engine) => {
  let harness: Harness;
  let ownerToken: string;
  let holder: { accountId: string; keyId: string; secret: string };
  let other: { accountId: string; keyId: string; secret: string };
  let cookie: string;

  beforeAll(async () => {
    harness = await startHarness({ engine });
    ownerToken = (await createAdminToken(harness.store, { role: 'owner' }, CLI_ACTOR)).secret;
    holder = await harness.newAccount('3.25', { name: 'laptop', models: ['model-5.6', 'model-5.6-mini', 'disabled-model'], requestsPerWindow: 30 });
    other = await harness.newAccount('900', { name: 'other' });
    cookie = consoleCookie(await signIn(harness.baseUrl, holder.secret));
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('gets 403 on every route of the admin API, another account named in the path or not, and changes nothing', async () => {
    const documentAnswer = await fetch(`${harness.baseUrl}/admin/v1/openapi.json`, { headers: { authorization: `Bearer ${ownerToken}` } });
    const document = (await documentAnswer.json()) as OpenApiDocument;
    const adminTokenId = (await harness.store.listAdminTokens())[0]?.id ?? '';
    const values: Record<string, string> = { account: other.accountId, token: adminTokenId, key: other.keyId, id: other.keyId };
    const before = await harness.store.findAccount(other.accountId);
    const called: string[] = [];
    for (const [template, methods] of Object.entries(document.paths)) {
      const path = template.replace(/\{(\w+)\}/g, (_whole, name: string) => values[name] ?? 'unknown');
      for (const method of Object.keys(methods)) {
        const response = await fetch(`${harness.baseUrl}${path}`, {
          method: method.toUpperCase(),
          headers: { cookie, 'x-tollgate-console': '1', 'content-type': 'application/json' },
          body: method === 'get' ? undefined : JSON.stringify({ name: 'taken-over', amount_usd: '100', reason: 'mine now', role: 'owner' }),
        });
        expect(response.status, `${method.toUpperCase()} ${path}`).toBe(403);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe('insufficient_permissions');
        called.push(`${method.toUpperCase()} ${template}`);
      }
    }
    const openapi = await fetch(`${harness.baseUrl}/admin/v1/openapi.json`, { headers: { cookie } });
    expect(openapi.status).toBe(403);
    // Every route the document lists (at least those of accounts, admin tokens and audit).
    expect(called.length).toBeGreaterThanOrEqual(13);
    expect(called).toContain('POST /admin/v1/accounts/{account}/credit');
    expect(await harness.store.findAccount(other.accountId)).toEqual(before);
    expect((await harness.store.listAdminTokens()).length).toBe(1);
  });

  it('reads its own account and key, with the session or with the key as Bearer', async () => {
    for (const headers of [{ cookie }, { authorization: `Bearer ${holder.secret}` }] as Array<Record<string, string>>) {
      const response = await fetch(`${harness.baseUrl}/console/api/self`, { headers });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const body = (await response.json()) as { account: Record<string, unknown>; key: Record<string, unknown> };
      expect(body.account).toMatchObject({ id: holder.accountId, balance_usd: '3.25', reserved_usd: '0', disabled: false });
      expect(body.key).toMatchObject({ id: holder.keyId, name: 'laptop', requests_per_window: 30, status: 'active', models: ['model-5.6', 'model-5.6-mini', 'disabled-model'] });
      expect(JSON.stringify(body)).not.toContain(other.accountId);
      expect(JSON.stringify(body)).not.toContain('hash');
    }
  });

  it('shows the balance as it is now, not as it was cached when the key was last used', async () => {
    await harness.client(holder.secret).chat.completions.create({ model: 'model-5.6-mini', messages: [{ role: 'user', content: 'Hello there' }] });
    const after = (await (await fetch(`${harness.baseUrl}/console/api/self`, { headers: { cookie } })).json()) as { account: { balance_usd: string } };
    const account = await harness.store.findAccount(holder.accountId);
    expect(account?.balanceNanos).toBeLessThan(3_250_000_000n);
    expect(after.account.balance_usd).toBe(formatUsd(account?.balanceNanos ?? 0n));
  });

  it('lists the models its key may use now, with exact prices per million tokens', async () => {
    const response = await fetch(`${harness.baseUrl}/console/api/self/models`, { headers: { cookie } });
    expect(response.status).toBe(200);
    // disabled-model is on the key's list but not enabled in the catalog: left out, as /v1/models does.
    expect(await response.json()).toEqual({
      data: [
        { id: 'model-5.6', prices_usd_per_million_tokens: { input: '1', cached_input: '0.5', cache_write: '1', output: '4' }, unit_prices_usd: {}, endpoints: ['/v1/responses', '/v1/chat/completions', '/v1/messages'], reasoning_efforts: ['low', 'medium', 'high', 'xhigh', 'max'], max_output_tokens: 4096, output_hold_usd: '0.016384' },
        { id: 'model-5.6-mini', prices_usd_per_million_tokens: { input: '1', cached_input: '0.5', cache_write: '1', output: '4' }, unit_prices_usd: {}, endpoints: ['/v1/responses', '/v1/chat/completions', '/v1/messages'], reasoning_efforts: [], max_output_tokens: 512, output_hold_usd: '0.002048' },
      ],
    });
    const everything = (await (await fetch(`${harness.baseUrl}/console/api/self/models`, { headers: { authorization: `Bearer ${other.secret}` } })).json()) as { data: Array<{ id: string }> };
    const listed = (await (await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${other.secret}` } })).json()) as { data: Array<{ id: string }> };
    expect(everything.data.map((model) => model.id)).toEqual(listed.data.map((model) => model.id));
  });

  it('refuses the self routes without a key holder: no credential (401), an admin session (403), an admin token as Bearer (401)', async () => {
    const adminCookie = consoleCookie(await signIn(harness.baseUrl, ownerToken));
    for (const path of ['/console/api/self', '/console/api/self/models']) {
      expect((await fetch(`${harness.baseUrl}${path}`)).status).toBe(401);
      const asAdmin = await fetch(`${harness.baseUrl}${path}`, { headers: { cookie: adminCookie } });
      expect(asAdmin.status).toBe(403);
      expect((await fetch(`${harness.baseUrl}${path}`, { headers: { authorization: `Bearer ${ownerToken}` } })).status).toBe(401);
      expect((await fetch(`${harness.baseUrl}${path}`, { headers: { authorization: 'Bearer sk-tg-made-up' } })).status).toBe(401);
    }
  });

  it.skipIf(!hasCurl)("runs the README's curl line as printed (the address swapped for the test server's)", async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Web console'));
    const curl = (/```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '').split('\n').find((line) => line.startsWith('curl ')) ?? '';
    expect(curl).toContain('http://127.0.0.1:8080/console/api/self');
    const line = curl.replaceAll('http://127.0.0.1:8080', harness.baseUrl);
    const { stdout } = await run('sh', ['-c', line], { env: { ...process.env, TOLLGATE_API_KEY: holder.secret } });
    expect((JSON.parse(stdout) as { account: { id: string } }).account.id).toBe(holder.accountId);
  });

  it('is read-only: other methods on the self routes are unknown routes', async () => {
    const response = await fetch(`${harness.baseUrl}/console/api/self`, { method: 'POST', headers: { cookie, 'x-tollgate-console': '1' } });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { message: 'Invalid URL (POST /console/api/self)', type: 'invalid_request_error', param: '', code: '' } });
  });
});
