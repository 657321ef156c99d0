/**
 * Console sessions over HTTP, on SQLite and PostgreSQL: an admin token or API key exchanged for a
 * cookie (its attributes), the admin API taking that cookie with its CSRF defences, logout, expiry,
 * a disabled credential ending its sessions, sessions shared by two instances on one database, and
 * the per-address limit on failed authentications covering made-up session cookies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { setAccountDisabled } from '../../src/admin/accounts.js';
import { createAdminToken, setAdminTokenDisabled } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { setKeyDisabled } from '../../src/admin/keys.js';
import { hashKeySecret } from '../../src/auth/key-secret.js';
import { parseConfig } from '../../src/config/load.js';
import { createGateway } from '../../src/server/gateway.js';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.js';
import { openStore } from '../../src/store/open-store.js';
import { testCatalog } from '../support/catalog.js';
import { consoleCookie, signIn } from '../support/console-session.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const INVALID_TOKEN = { error: { message: 'Invalid token.', type: 'service_api_error', code: '' } };

describe.each(engines)('console sessions on %s', (engine) => {
  let harness: Harness;
  let owner: { id: string; secret: string };

  beforeAll(async () => {
    harness = await startHarness({ engine });
    const created = await createAdminToken(harness.store, { role: 'owner', name: 'owner' }, CLI_ACTOR);
    owner = { id: created.token.id, secret: created.secret };
  });

  afterAll(async () => {
    await harness?.close();
  });

  const get = (path: string, cookie: string | null, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${harness.baseUrl}${path}`, { headers: { ...(cookie === null ? {} : { cookie }), ...headers } });

  const post = (path: string, cookie: string | null, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${harness.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cookie === null ? {} : { cookie }), ...headers },
      body: JSON.stringify(body),
    });

  describe('signing in', () => {
    it('exchanges an admin token for an HTTP-only, SameSite=Strict cookie with an expiry', async () => {
      const response = await signIn(harness.baseUrl, owner.secret);
      expect(response.status).toBe(201);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const setCookie = response.headers.get('set-cookie') ?? '';
      expect(setCookie).toMatch(/^tollgate_session=tgs_[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; Expires=[^;]+ GMT; HttpOnly; SameSite=Strict$/);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ kind: 'admin', admin_token: { id: owner.id, role: 'owner', prefix: owner.secret.slice(0, 13) } });
      const expiresAt = Date.parse(String(body.expires_at));
      expect(expiresAt - Date.now()).toBeGreaterThan(11.9 * 3600_000);
      expect(expiresAt - Date.now()).toBeLessThanOrEqual(12 * 3600_000);
      // The session id is stored only as its hash.
      const sessionId = /tollgate_session=([^;]+)/.exec(setCookie)?.[1] ?? '';
      expect(await harness.store.findConsoleSession(sessionId)).toBeUndefined();
      expect((await harness.store.findConsoleSession(hashKeySecret(sessionId)))?.subjectId).toBe(owner.id);
    });

    it('marks the cookie Secure when the browser came over HTTPS (a proxy says so)', async () => {
      const response = await signIn(harness.baseUrl, owner.secret, { 'x-forwarded-proto': 'https' });
      expect(response.headers.get('set-cookie')).toMatch(/; Secure; SameSite=Strict$/);
    });

    it("exchanges an API key for a key holder's session", async () => {
      const { secret, keyId, accountId } = await harness.newAccount('2.5', { name: 'laptop' });
      const response = await signIn(harness.baseUrl, secret);
      expect(response.status).toBe(201);
      expect(await response.json()).toMatchObject({ kind: 'key', key: { id: keyId, name: 'laptop' }, account: { id: accountId, balance_usd: '2.5' } });
    });

    it('refuses made-up, disabled and malformed credentials with the 401, and a bad body with a 400', async () => {
      const { secret, keyId } = await harness.newAccount('1');
      await setKeyDisabled(harness.store, keyId, true, CLI_ACTOR);
      for (const token of ['tg-admin-made-up', 'sk-tg-made-up', secret, 'hello', 'x'.repeat(200)]) {
        const response = await signIn(harness.baseUrl, token);
        expect(response.status).toBe(401);
        expect(await response.json()).toEqual(INVALID_TOKEN);
        expect(response.headers.get('set-cookie')).toBeNull();
      }
      for (const body of [{}, { token: '' }, { token: 7 }, { token: 'x'.repeat(201) }]) {
        const response = await post('/console/api/session', null, body, { 'x-tollgate-console': '1' });
        expect(response.status).toBe(400);
        expect(((await response.json()) as { error: { param: string } }).error.param).toBe('token');
      }
      // An unknown field is refused by name, as on the admin API and /v1.
      const extra = await post('/console/api/session', null, { token: owner.secret, extra: true }, { 'x-tollgate-console': '1' });
      expect(extra.status).toBe(400);
      expect(await extra.json()).toEqual({ error: { message: 'Invalid request: extra: unrecognized field.', type: 'invalid_request_error', param: 'extra', code: 'unknown_parameter' } });
      expect(extra.headers.get('set-cookie')).toBeNull();
      const malformed = await fetch(`${harness.baseUrl}/console/api/session`, { method: 'POST', headers: { 'x-tollgate-console': '1' }, body: '{"token":' });
      expect(malformed.status).toBe(400);
      expect(await malformed.json()).toEqual({ error: { message: 'Invalid request: invalid JSON request body.', type: 'service_api_error', code: '' } });
    });

    it('refuses a sign-in another site could have made: no console header, a foreign Origin, a cross-site fetch', async () => {
      const refusals: Array<Record<string, string>> = [
        {},
        { 'x-tollgate-console': '1', origin: 'https://evil.example' },
        { 'x-tollgate-console': '1', origin: 'null' },
        { 'x-tollgate-console': '1', 'sec-fetch-site': 'cross-site' },
      ];
      for (const headers of refusals) {
        const response = await post('/console/api/session', null, { token: owner.secret }, headers);
        expect(response.status).toBe(403);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe('cross_site_request');
        expect(response.headers.get('set-cookie')).toBeNull();
      }
      const sameOrigin = await post('/console/api/session', null, { token: owner.secret }, { 'x-tollgate-console': '1', origin: harness.baseUrl, 'sec-fetch-site': 'same-origin' });
      expect(sameOrigin.status).toBe(201);
    });
  });

  describe('the admin API with the cookie', () => {
    it('reads with the cookie alone, as the admin token would', async () => {
      const cookie = consoleCookie(await signIn(harness.baseUrl, owner.secret));
      const response = await get('/admin/v1/accounts', cookie);
      expect(response.status).toBe(200);
      expect(await get('/console/api/session', cookie).then((answer) => answer.json())).toMatchObject({ kind: 'admin', admin_token: { id: owner.id } });
    });

    it('changes only with the console header and from this origin, and records the admin token in the audit log', async () => {
      const cookie = consoleCookie(await signIn(harness.baseUrl, owner.secret));
      const refused = [
        await post('/admin/v1/accounts', cookie, { name: `csrf-a-${engine}` }),
        await post('/admin/v1/accounts', cookie, { name: `csrf-b-${engine}` }, { 'x-tollgate-console': '1', origin: 'https://evil.example' }),
        await post('/admin/v1/accounts', cookie, { name: `csrf-c-${engine}` }, { 'x-tollgate-console': 'yes' }),
        await post('/admin/v1/accounts', cookie, { name: `csrf-d-${engine}` }, { 'x-tollgate-console': '1', 'sec-fetch-site': 'cross-site' }),
      ];
      for (const response of refused) {
        expect(response.status).toBe(403);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe('cross_site_request');
      }
      for (const name of ['a', 'b', 'c', 'd']) expect(await harness.store.findAccount(`csrf-${name}-${engine}`)).toBeUndefined();

      const created = await post('/admin/v1/accounts', cookie, { name: `csrf-ok-${engine}` }, { 'x-tollgate-console': '1', origin: harness.baseUrl });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const audit = (await (await get(`/admin/v1/audit?target_type=account&target_id=${id}`, cookie)).json()) as { data: Array<{ admin_token_id: string }> };
      expect(audit.data.map((entry) => entry.admin_token_id)).toEqual([owner.id]);
    });

    it('leaves Bearer tokens as they were: no console header needed, and a Bearer header wins over a cookie', async () => {
      const created = await post('/admin/v1/accounts', null, { name: `bearer-${engine}` }, { authorization: `Bearer ${owner.secret}` });
      expect(created.status).toBe(201);
      const viewer = await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR);
      const ownerCookie = consoleCookie(await signIn(harness.baseUrl, owner.secret));
      const asViewer = await post('/admin/v1/accounts', ownerCookie, { name: `bearer-viewer-${engine}` }, { authorization: `Bearer ${viewer.secret}`, 'x-tollgate-console': '1' });
      expect(asViewer.status).toBe(403);
      expect(((await asViewer.json()) as { error: { code: string } }).error.code).toBe('insufficient_permissions');
    });

    it('answers a made-up or malformed session cookie with the 401', async () => {
      for (const cookie of ['tollgate_session=tgs_' + 'A'.repeat(43), 'tollgate_session=nonsense', 'tollgate_session=']) {
        const response = await get('/admin/v1/accounts', cookie);
        expect(response.status).toBe(401);
        expect(await response.json()).toEqual(INVALID_TOKEN);
      }
      expect((await get('/admin/v1/accounts', 'other=1')).status).toBe(401);
    });
  });

  describe('ending a session', () => {
    it('logs out: the cookie is cleared and the session refused everywhere from then on', async () => {
      const cookie = consoleCookie(await signIn(harness.baseUrl, owner.secret));
      const withoutHeader = await fetch(`${harness.baseUrl}/console/api/session`, { method: 'DELETE', headers: { cookie } });
      expect(withoutHeader.status).toBe(403);
      expect((await get('/admin/v1/accounts', cookie)).status).toBe(200);
      const logout = await fetch(`${harness.baseUrl}/console/api/session`, { method: 'DELETE', headers: { cookie, 'x-tollgate-console': '1' } });
      expect(logout.status).toBe(204);
      expect(logout.headers.get('set-cookie')).toBe('tollgate_session=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict');
      expect((await get('/admin/v1/accounts', cookie)).status).toBe(401);
      expect((await get('/console/api/session', cookie)).status).toBe(401);
    });

    it('refuses an expired session', async () => {
      const sessionId = `tgs_${'e'.repeat(43)}`;
      const past = new Date(Date.now() - 1000);
      await harness.store.createConsoleSession({ hash: hashKeySecret(sessionId), kind: 'admin', subjectId: owner.id, createdAt: new Date(past.getTime() - 3600_000), expiresAt: past });
      expect((await get('/admin/v1/accounts', `tollgate_session=${sessionId}`)).status).toBe(401);
      // Opening a new session clears expired ones away.
      await signIn(harness.baseUrl, owner.secret);
      expect(await harness.store.findConsoleSession(hashKeySecret(sessionId))).toBeUndefined();
    });

    it('ends the sessions of a disabled admin token at once', async () => {
      const token = await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR);
      const cookie = consoleCookie(await signIn(harness.baseUrl, token.secret));
      expect((await get('/admin/v1/accounts', cookie)).status).toBe(200);
      await setAdminTokenDisabled(harness.store, token.token.id, true, CLI_ACTOR);
      expect((await get('/admin/v1/accounts', cookie)).status).toBe(401);
      expect((await get('/console/api/session', cookie)).status).toBe(401);
    });

    it("ends a key holder's session when the key or its account is disabled", async () => {
      const first = await harness.newAccount('1');
      const firstCookie = consoleCookie(await signIn(harness.baseUrl, first.secret));
      expect((await get('/console/api/self', firstCookie)).status).toBe(200);
      await setKeyDisabled(harness.store, first.keyId, true, CLI_ACTOR);
      expect((await get('/console/api/self', firstCookie)).status).toBe(401);

      const second = await harness.newAccount('1');
      const secondCookie = consoleCookie(await signIn(harness.baseUrl, second.secret));
      await setAccountDisabled(harness.store, second.accountId, true, CLI_ACTOR);
      expect((await get('/console/api/self', secondCookie)).status).toBe(401);
      expect((await get('/console/api/session', secondCookie)).status).toBe(401);
    });

    it('keeps them ended when the account, key or admin token is enabled again; a fresh sign-in works, and each change is audited', async () => {
      const admin = (path: string): Promise<Response> => fetch(`${harness.baseUrl}/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${owner.secret}` } });
      const auditActions = async (type: string, id: string): Promise<Array<[string, string | null]>> => {
        const page = (await (await get(`/admin/v1/audit?target_type=${type}&target_id=${id}`, null, { authorization: `Bearer ${owner.secret}` })).json()) as {
          data: Array<{ action: string; admin_token_id: string | null }>;
        };
        return page.data.map((entry) => [entry.action, entry.admin_token_id]);
      };
      const holder = await harness.newAccount('1');
      const operator = await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR);
      const cases = [
        { type: 'account', id: holder.accountId, secret: holder.secret, path: `/accounts/${holder.accountId}`, check: '/console/api/self' },
        { type: 'key', id: holder.keyId, secret: holder.secret, path: `/keys/${holder.keyId}`, check: '/console/api/self' },
        { type: 'admin_token', id: operator.token.id, secret: operator.secret, path: `/admin-tokens/${operator.token.id}`, check: '/admin/v1/accounts' },
      ];
      for (const { type, id, secret, path, check } of cases) {
        const cookie = consoleCookie(await signIn(harness.baseUrl, secret));
        expect((await get(check, cookie)).status).toBe(200);
        expect((await admin(`${path}/disable`)).status).toBe(200);
        expect((await get(check, cookie)).status).toBe(401);
        expect((await admin(`${path}/enable`)).status).toBe(200);
        for (const route of [check, '/console/api/session']) {
          const refused = await get(route, cookie);
          expect([type, route, refused.status]).toEqual([type, route, 401]);
          expect(await refused.json()).toEqual(INVALID_TOKEN);
        }
        const fresh = consoleCookie(await signIn(harness.baseUrl, secret));
        expect((await get(check, fresh)).status).toBe(200);
        // The audit log lists newest first.
        expect((await auditActions(type, id)).filter(([action]) => !action.endsWith('.create')).reverse()).toEqual([
          [`${type}.disable`, owner.id],
          [`${type}.enable`, owner.id],
        ]);
      }
    });

    it('ends a key holder\'s session no later than the key expires, so a later expiry does not bring it back', async () => {
      const expiresAt = new Date(Date.now() + 60_000);
      const { secret } = await harness.newAccount('1', { expiresAt });
      const response = await signIn(harness.baseUrl, secret);
      expect(response.status).toBe(201);
      expect(((await response.json()) as { expires_at: string }).expires_at).toBe(expiresAt.toISOString());
      expect(response.headers.get('set-cookie')).toMatch(/Max-Age=(59|60);/);
    });
  });

  it('shares sessions between instances on one database: signed in on one, used and ended on another', async () => {
    const store = await openStore(harness.database.url);
    const limiter = createMemoryLimiter();
    const config = parseConfig(testCatalog(), 'test catalog');
    const other = await createGateway({ config, store, limiter, logger: pino({ level: 'silent' }), env: {} });
    try {
      const otherUrl = (await other.app.listen({ host: '127.0.0.1', port: 0 })).replace('localhost', '127.0.0.1');
      const cookie = consoleCookie(await signIn(harness.baseUrl, owner.secret));
      expect((await fetch(`${otherUrl}/admin/v1/accounts`, { headers: { cookie } })).status).toBe(200);
      const logout = await fetch(`${otherUrl}/console/api/session`, { method: 'DELETE', headers: { cookie, 'x-tollgate-console': '1' } });
      expect(logout.status).toBe(204);
      expect((await get('/admin/v1/accounts', cookie)).status).toBe(401);
    } finally {
      await other.close();
      await limiter.close();
      await store.close();
    }
  });
});

describe('made-up session cookies and the failed-authentication limit', () => {
  let harness: Harness;

  beforeAll(async () => {
    const catalog = testCatalog() as { rate_limits: Record<string, unknown> };
    harness = await startHarness({ catalog: { ...catalog, rate_limits: { ...catalog.rate_limits, auth_failures_per_minute: 3 } } });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('counts each one as a failed authentication of the address: 401 up to the limit, then 429', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const response = await fetch(`${harness.baseUrl}/admin/v1/accounts`, { headers: { cookie: `tollgate_session=tgs_${String(attempt).repeat(43)}` } });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });
});
