/**
 * The admin API's keys end to end, on SQLite and on PostgreSQL (with Redis): every route over
 * HTTP, role refusals, rotation (the old secret refused at once, the new one served), deletion
 * (refused from then on, its history kept), the audit trail without secrets or hashes, a key
 * budget seen through the API, and a key disabled through one instance refused by another within a
 * second (with Redis, through its announcement alone).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { hashKeySecret } from '../../src/auth/key-secret.js';
import { createKeyEvents, type KeyEvents } from '../../src/auth/key-events.js';
import { closeRedisClient, createRedisClient } from '../../src/ratelimit/redis-client.js';
import { adminClient, allPages, type AdminCall } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { consoleCookie, signIn } from '../support/console-session.js';
import { engines, redisUrl } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const INVALID_TOKEN = { error: { message: 'Invalid token.', type: 'service_api_error', code: '' } };
const CHAT = { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 };
/** The test catalog without the per-address limit on failed authentications: these tests poll refused keys on purpose. */
const base = testCatalog() as { rate_limits: Record<string, unknown> };
const CATALOG = { ...base, rate_limits: { ...base.rate_limits, auth_failures_per_minute: 0 } };

async function eventually(check: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(engines)('admin API keys on %s', (engine) => {
  let harness: Harness;
  let other: Harness;
  let call: AdminCall;
  let keyEvents: KeyEvents | undefined;
  let closeRedis: () => Promise<void> = async () => undefined;
  const tokens = { operator: '', viewer: '' };
  const ids = { operator: '' };
  // With Redis, the second instance learns of changes only through the announcement.
  const withRedis = engine === 'postgres' && redisUrl !== undefined;

  beforeAll(async () => {
    if (withRedis && redisUrl !== undefined) {
      const publisher = createRedisClient(redisUrl);
      const subscriber = createRedisClient(redisUrl);
      keyEvents = createKeyEvents({ publisher, subscriber, channel: `tollgate-test:keys:${Date.now()}:${Math.random()}` });
      closeRedis = async () => {
        await Promise.all([closeRedisClient(publisher), closeRedisClient(subscriber)]);
      };
    }
    const events = keyEvents;
    harness = await startHarness({ engine, catalog: CATALOG, ...(events === undefined ? {} : { announceKeyChange: () => events.publish() }) });
    other = await startHarness({ engine, catalog: CATALOG, sharedDatabase: harness.database, revisionPollMs: withRedis ? 600_000 : 100 });
    await events?.subscribe(() => other.gateway.authenticator.invalidate());
    call = adminClient(harness.baseUrl);
    for (const role of ['operator', 'viewer'] as const) {
      const created = await createAdminToken(harness.store, { role }, CLI_ACTOR);
      tokens[role] = created.secret;
      if (role === 'operator') ids.operator = created.token.id;
    }
  });

  afterAll(async () => {
    await other?.close();
    await harness?.close();
    await closeRedis();
  });

  async function newAccount(balanceUsd = '5'): Promise<string> {
    const created = await call('POST', '/accounts', tokens.operator, { name: `keys-${engine}-${Date.now()}-${Math.random().toString(36).slice(2)}`, balance_usd: balanceUsd });
    expect(created.status).toBe(201);
    return String(created.body.id);
  }

  async function newKey(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const created = await call('POST', '/keys', tokens.operator, body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  }

  const chat = (base: string, secret: string) =>
    fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify(CHAT) });

  it('creates a key with every setting, its secret in that answer only, and it serves /v1', async () => {
    const accountId = await newAccount();
    const created = await newKey({
      account: accountId,
      name: 'ci',
      models: ['model-5.6-mini', 'model-5.6'],
      requests_per_window: 60,
      tokens_per_minute: 100_000,
      expires_at: '2999-01-01T00:00:00Z',
      budget: { limit_usd: '2', period: 'week' },
    });
    expect(created).toMatchObject({
      id: expect.stringMatching(/^key_/),
      account_id: accountId,
      name: 'ci',
      models: ['model-5.6-mini', 'model-5.6'],
      requests_per_window: 60,
      tokens_per_minute: 100_000,
      expires_at: '2999-01-01T00:00:00.000Z',
      status: 'active',
      budget: { period: 'week', limit_usd: '2' },
      deleted_at: null,
      key: expect.stringMatching(/^sk-tg-[0-9A-Za-z]{40}$/),
    });
    const secret = String(created.key);
    expect(created.prefix).toBe(secret.slice(0, 12));
    expect((await chat(harness.baseUrl, secret)).status).toBe(200);

    const got = await call('GET', `/keys/${String(created.id)}`, tokens.viewer);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('key');
    expect(JSON.stringify(got.body)).not.toContain(secret);
    expect(JSON.stringify(got.body)).not.toContain(hashKeySecret(secret));
    expect(got.body.budget).toMatchObject({ period: 'week', limit_usd: '2', reserved_usd: '0', resets_at: expect.any(String) });
    const budget = got.body.budget as Record<string, string>;
    // What the one request cost is spent; the rest remains.
    expect(Number(budget.spent_usd)).toBeGreaterThan(0);
    expect(Number(budget.remaining_usd) + Number(budget.spent_usd)).toBeCloseTo(2, 9);
    expect(new Date(budget.period_start ?? '').getUTCDay()).toBe(1);
    expect((await call('GET', `/keys/${String(created.prefix)}`, tokens.viewer)).body.id).toBe(created.id);
  });

  it('lists keys by cursor, filtered by account and status', async () => {
    const accountId = await newAccount();
    const made: Array<Record<string, unknown>> = [];
    for (let index = 0; index < 5; index += 1) made.push(await newKey({ account: accountId, name: `k${index}` }));
    expect((await call('POST', `/keys/${String(made[1]?.id)}/disable`, tokens.operator)).body).toMatchObject({ status: 'disabled', disabled: true });
    expect((await call('DELETE', `/keys/${String(made[3]?.id)}`, tokens.operator)).body).toMatchObject({ status: 'deleted' });

    const listed = await allPages(call, `/keys?account=${accountId}`, tokens.viewer, 2);
    expect(listed.pages).toBe(2);
    expect(listed.rows.map((row) => row.id)).toEqual([made[0], made[1], made[2], made[4]].map((row) => row?.id));
    expect(JSON.stringify(listed.rows)).not.toMatch(/sk-tg-[0-9A-Za-z]{40}/);
    const active = await allPages(call, `/keys?account=${accountId}&status=active`, tokens.viewer, 50);
    expect(active.rows.map((row) => row.id)).toEqual([made[0], made[2], made[4]].map((row) => row?.id));
    expect((await allPages(call, `/keys?account=${accountId}&status=disabled`, tokens.viewer, 50)).rows.map((row) => row.id)).toEqual([made[1]?.id]);
    expect((await allPages(call, `/keys?account=${accountId}&status=deleted`, tokens.viewer, 50)).rows.map((row) => row.id)).toEqual([made[3]?.id]);
    const everything = await allPages(call, '/keys', tokens.viewer, 3);
    expect(new Set(everything.rows.map((row) => row.id)).size).toBe(everything.rows.length);
    expect(everything.rows.map((row) => row.id)).toEqual(expect.arrayContaining([made[0]?.id, made[4]?.id]));
  });

  it('updates limits, models, expiry and budget; null clears; a model taken away is refused at once', async () => {
    const accountId = await newAccount();
    const created = await newKey({ account: accountId });
    const id = String(created.id);
    const secret = String(created.key);
    const changed = await call('PATCH', `/keys/${id}`, tokens.operator, {
      name: 'renamed',
      models: ['model-5.6'],
      requests_per_window: 5,
      tokens_per_minute: 9_000,
      expires_at: '2998-06-01',
      budget: { limit_usd: '0.5', period: 'day' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ name: 'renamed', models: ['model-5.6'], requests_per_window: 5, tokens_per_minute: 9_000, expires_at: '2998-06-01T00:00:00.000Z', budget: { period: 'day', limit_usd: '0.5' } });
    // The key may no longer call the mini model: refused on this instance at once.
    const refused = await chat(harness.baseUrl, secret);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('model_not_found');

    const kept = await call('PATCH', `/keys/${id}`, tokens.operator, { budget: { limit_usd: '3' } });
    expect(kept.body.budget).toEqual({ period: 'day', limit_usd: '3' });
    const cleared = await call('PATCH', `/keys/${id}`, tokens.operator, { name: null, models: null, requests_per_window: null, tokens_per_minute: null, expires_at: null, budget: null });
    expect(cleared.body).toMatchObject({ name: null, models: null, requests_per_window: null, tokens_per_minute: null, expires_at: null, budget: null });
    expect((await chat(harness.baseUrl, secret)).status).toBe(200);
  });

  it('refuses bad input with 400, an unknown key with 404, a deleted key with 409', async () => {
    const accountId = await newAccount();
    const created = await newKey({ account: accountId });
    const id = String(created.id);
    const bad: Array<[string, string, unknown, string | undefined]> = [
      ['POST', '/keys', {}, 'account'],
      ['POST', '/keys', { account: accountId, requests_per_window: 0 }, 'requests_per_window'],
      ['POST', '/keys', { account: accountId, requests_per_window: '5' }, 'requests_per_window'],
      ['POST', '/keys', { account: accountId, models: [] }, undefined],
      ['POST', '/keys', { account: accountId, expires_at: '2000-01-01' }, undefined],
      ['POST', '/keys', { account: accountId, expires_at: 'soon' }, undefined],
      ['POST', '/keys', { account: accountId, budget: { limit_usd: '0' } }, undefined],
      ['POST', '/keys', { account: accountId, budget: { limit_usd: '1e3' } }, 'budget.limit_usd'],
      ['POST', '/keys', { account: accountId, budget: { limit_usd: '1', period: 'year' } }, 'budget.period'],
      ['POST', '/keys', { account: accountId, budget: { period: 'day' } }, 'budget.limit_usd'],
      ['PATCH', `/keys/${id}`, {}, undefined],
      ['PATCH', `/keys/${id}`, { tokens_per_minute: -1 }, 'tokens_per_minute'],
      ['GET', '/keys?status=gone', undefined, 'status'],
      ['GET', '/keys?cursor=junk', undefined, 'cursor'],
      ['GET', '/keys?limit=0', undefined, 'limit'],
    ];
    for (const [method, path, body, param] of bad) {
      const answer = await call(method, path, tokens.operator, body);
      expect(answer.status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`).toBe(400);
      const error = answer.body.error as Record<string, unknown>;
      expect(error.type).toBe('invalid_request_error');
      expect(error.param).toBe(param);
      expect(answer.requestId).toMatch(/^req_/);
    }
    expect((await call('POST', '/keys', tokens.operator, { account: 'nobody' })).status).toBe(404);
    for (const [method, path, body] of [
      ['GET', '/keys/key_missing', undefined],
      ['PATCH', '/keys/key_missing', { name: 'x' }],
      ['POST', '/keys/key_missing/disable', undefined],
      ['POST', '/keys/key_missing/enable', undefined],
      ['POST', '/keys/key_missing/rotate', undefined],
      ['DELETE', '/keys/key_missing', undefined],
    ] as const) {
      const answer = await call(method, path, tokens.operator, body);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body).toEqual({ error: { message: 'no key with id or prefix "key_missing"', type: 'invalid_request_error', code: 'not_found' } });
    }
    expect((await call('DELETE', `/keys/${id}`, tokens.operator)).status).toBe(200);
    for (const [method, path, body] of [
      ['PATCH', `/keys/${id}`, { name: 'x' }],
      ['POST', `/keys/${id}/enable`, undefined],
      ['POST', `/keys/${id}/rotate`, undefined],
      ['DELETE', `/keys/${id}`, undefined],
    ] as const) {
      const answer = await call(method, path, tokens.operator, body);
      expect(answer.status, `${method} ${path}`).toBe(409);
      expect((answer.body.error as Record<string, unknown>).message).toMatch(new RegExp(`^key ${id} was deleted at .*; it cannot be changed$`));
    }
  });

  it('a viewer reads keys but changes none (403); an API key gets 401 there', async () => {
    const accountId = await newAccount();
    const created = await newKey({ account: accountId });
    const id = String(created.id);
    expect((await call('GET', '/keys', tokens.viewer)).status).toBe(200);
    expect((await call('GET', `/keys/${id}`, tokens.viewer)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/keys', { account: accountId }],
      // The role is checked before the body: no validation detail for a token that cannot write.
      ['POST', '/keys', { requests_per_window: 0 }],
      ['PATCH', `/keys/${id}`, { name: 'never' }],
      ['POST', `/keys/${id}/disable`, undefined],
      ['POST', `/keys/${id}/enable`, undefined],
      ['POST', `/keys/${id}/rotate`, undefined],
      ['DELETE', `/keys/${id}`, undefined],
    ] as const) {
      const answer = await call(method, path, tokens.viewer, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body).toEqual({ error: { message: 'This operation needs an admin token with the operator role; this one is a viewer.', type: 'invalid_request_error', code: 'insufficient_permissions' } });
      const withApiKey = await call(method, path, String(created.key), body);
      expect(withApiKey.status).toBe(401);
      expect(withApiKey.body).toEqual(INVALID_TOKEN);
    }
    expect((await call('GET', '/keys', String(created.key))).status).toBe(401);
    expect((await call('GET', `/keys/${id}`, tokens.viewer)).body).toMatchObject({ name: null, disabled: false, status: 'active' });
  });

  it('rotate: the old secret is refused at once, on this instance and the other; the new one works on both', async () => {
    const accountId = await newAccount();
    const created = await newKey({ account: accountId });
    const old = String(created.key);
    for (const base of [harness.baseUrl, other.baseUrl]) expect((await chat(base, old)).status).toBe(200);
    const rotated = await call('POST', `/keys/${String(created.id)}/rotate`, tokens.operator);
    expect(rotated.status).toBe(200);
    const fresh = String(rotated.body.key);
    expect(fresh).toMatch(/^sk-tg-[0-9A-Za-z]{40}$/);
    expect(fresh).not.toBe(old);
    expect(rotated.body).toMatchObject({ id: created.id, prefix: fresh.slice(0, 12) });
    const refused = await chat(harness.baseUrl, old);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual(INVALID_TOKEN);
    expect(await eventually(async () => (await chat(other.baseUrl, old)).status === 401, 1_000)).toBe(true);
    for (const base of [harness.baseUrl, other.baseUrl]) expect((await chat(base, fresh)).status).toBe(200);
  });

  it('a key disabled through one instance is refused by the other within a second, and served again once enabled', async () => {
    const accountId = await newAccount();
    const created = await newKey({ account: accountId });
    const secret = String(created.key);
    expect((await chat(other.baseUrl, secret)).status).toBe(200);
    const started = Date.now();
    expect((await call('POST', `/keys/${String(created.id)}/disable`, tokens.operator)).status).toBe(200);
    expect((await chat(harness.baseUrl, secret)).status).toBe(401);
    expect(await eventually(async () => (await chat(other.baseUrl, secret)).status === 401, 1_000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect((await call('POST', `/keys/${String(created.id)}/enable`, tokens.operator)).status).toBe(200);
    expect(await eventually(async () => (await chat(other.baseUrl, secret)).status === 200, 1_000)).toBe(true);
  });

  it('delete: the key is refused from then on everywhere, and its ledger history stays', async () => {
    const accountId = await newAccount();
    const created = await newKey({ account: accountId });
    const secret = String(created.key);
    expect((await chat(harness.baseUrl, secret)).status).toBe(200);
    expect((await chat(other.baseUrl, secret)).status).toBe(200);
    const deleted = await call('DELETE', `/keys/${String(created.id)}`, tokens.operator);
    expect(deleted.body).toMatchObject({ id: created.id, status: 'deleted', deleted_at: expect.any(String) });
    expect((await chat(harness.baseUrl, secret)).status).toBe(401);
    expect(await eventually(async () => (await chat(other.baseUrl, secret)).status === 401, 1_000)).toBe(true);
    const ledger = await call('GET', `/accounts/${accountId}/ledger`, tokens.viewer);
    const charges = (ledger.body.data as Array<Record<string, unknown>>).filter((entry) => entry.kind === 'charge');
    // Two before the delete, and any the other instance served before it heard of it.
    expect(charges.length).toBeGreaterThanOrEqual(2);
    expect(charges.every((entry) => entry.key_id === created.id)).toBe(true);
    expect((await call('GET', `/keys/${String(created.id)}`, tokens.viewer)).body).toMatchObject({ status: 'deleted' });
  });

  it("rotate and delete end the console sessions the key's old secret opened", async () => {
    const accountId = await newAccount();
    const self = (cookie: string) => fetch(`${harness.baseUrl}/console/api/self`, { headers: { cookie } });
    for (const change of ['rotate', 'delete'] as const) {
      const created = await newKey({ account: accountId });
      const cookie = consoleCookie(await signIn(harness.baseUrl, String(created.key)));
      expect((await self(cookie)).status).toBe(200);
      const answer = change === 'rotate' ? await call('POST', `/keys/${String(created.id)}/rotate`, tokens.operator) : await call('DELETE', `/keys/${String(created.id)}`, tokens.operator);
      expect(answer.status).toBe(200);
      expect((await self(cookie)).status, change).toBe(401);
      if (change === 'rotate') expect((await self(consoleCookie(await signIn(harness.baseUrl, String(answer.body.key)))))).toMatchObject({ status: 200 });
    }
    // A deleted key cannot sign in either.
    const gone = await newKey({ account: accountId });
    await call('DELETE', `/keys/${String(gone.id)}`, tokens.operator);
    expect((await signIn(harness.baseUrl, String(gone.key))).status).toBe(401);
  });

  it('audits every key change with who, before and after, never a secret or a hash', async () => {
    const accountId = await newAccount();
    const created = await newKey({ account: accountId, budget: { limit_usd: '1', period: 'month' } });
    const id = String(created.id);
    await call('PATCH', `/keys/${id}`, tokens.operator, { requests_per_window: 9 });
    await call('PATCH', `/keys/${id}`, tokens.viewer, { requests_per_window: 10 });
    await call('POST', `/keys/${id}/disable`, tokens.operator);
    await call('POST', `/keys/${id}/enable`, tokens.operator);
    const rotated = await call('POST', `/keys/${id}/rotate`, tokens.operator);
    await call('DELETE', `/keys/${id}`, tokens.operator);

    const audit = await allPages(call, `/audit?target_type=key&target_id=${id}`, tokens.viewer, 3);
    // Newest first: read oldest first below.
    const oldestFirst = [...audit.rows].reverse();
    expect(oldestFirst.map((row) => [row.action, row.admin_token_id])).toEqual([
      ['key.create', ids.operator],
      ['key.update', ids.operator],
      ['key.disable', ids.operator],
      ['key.enable', ids.operator],
      ['key.rotate', ids.operator],
      ['key.delete', ids.operator],
    ]);
    const [create, update, disable, , rotate, remove] = oldestFirst;
    expect(create?.before).toBeNull();
    expect(create?.after).toMatchObject({ id, account_id: accountId, budget: { period: 'month', limit_usd: '1' } });
    expect(update?.before).toMatchObject({ requests_per_window: null });
    expect(update?.after).toMatchObject({ requests_per_window: 9 });
    expect(disable?.after).toMatchObject({ disabled: true, status: 'disabled' });
    expect(rotate?.before).toMatchObject({ prefix: created.prefix });
    expect(rotate?.after).toMatchObject({ prefix: rotated.body.prefix });
    expect(remove?.after).toMatchObject({ status: 'deleted' });
    const text = JSON.stringify(audit.rows);
    for (const secret of [String(created.key), String(rotated.body.key)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(hashKeySecret(secret));
    }
    expect(text).not.toContain('hash');
  });
});
