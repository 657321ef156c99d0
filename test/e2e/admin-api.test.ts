/**
 * The admin API end to end: a real server on loopback, real SQLite and PostgreSQL, admin tokens
 * made by the same service the CLI uses. Every route, every role refusal, 401 for the wrong kind
 * of credential both ways, pagination, the debit floor and the audit trail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient, allPages, type AdminCall } from '../support/admin-client.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const INVALID_TOKEN = { error: { message: 'Invalid token.', type: 'service_api_error', code: '' } };

describe.each(engines)('admin API on %s', (engine) => {
  let harness: Harness;
  let call: AdminCall;
  const tokens = { owner: '', operator: '', viewer: '' };
  const ids = { owner: '', operator: '', viewer: '' };

  beforeAll(async () => {
    harness = await startHarness({ engine });
    call = adminClient(harness.baseUrl);
    for (const role of ['owner', 'operator', 'viewer'] as const) {
      const created = await createAdminToken(harness.store, { role, name: `${role} of the tests` }, CLI_ACTOR);
      tokens[role] = created.secret;
      ids[role] = created.token.id;
    }
  });

  afterAll(async () => {
    await harness?.close();
  });

  async function newAccount(name: string, balanceUsd = '0'): Promise<Record<string, unknown>> {
    const created = await call('POST', '/accounts', tokens.operator, { name, balance_usd: balanceUsd });
    expect(created.status).toBe(201);
    return created.body;
  }

  describe('authentication', () => {
    it('refuses no token, a made-up token and an API key with the spec 401 and a request id', async () => {
      const { secret } = await harness.newAccount('1');
      for (const token of [null, 'tg-admin-madeup', secret]) {
        const answer = await call('GET', '/accounts', token);
        expect(answer.status).toBe(401);
        expect(answer.body).toEqual(INVALID_TOKEN);
        expect(answer.requestId).toMatch(/^req_/);
      }
    });

    it('refuses an admin token on /v1 with 401, while the API key works there', async () => {
      const { secret } = await harness.newAccount('1');
      const withKey = await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
      expect(withKey.status).toBe(200);
      for (const token of [tokens.owner, tokens.viewer]) {
        const models = await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
        expect(models.status).toBe(401);
        expect(await models.json()).toEqual(INVALID_TOKEN);
        const chat = await harness.post('/v1/chat/completions', { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }, token);
        expect(chat.status).toBe(401);
      }
    });

    it('answers an unknown admin route with the spec 404', async () => {
      const answer = await call('GET', '/nothing-here', tokens.owner);
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ error: { message: 'Invalid URL (GET /admin/v1/nothing-here)', type: 'invalid_request_error', param: '', code: '' } });
    });
  });

  describe('roles', () => {
    const forbidden = (role: string, has: string) => ({
      error: { message: `This operation needs an admin token with the ${role} role; this one is a ${has}.`, type: 'invalid_request_error', code: 'insufficient_permissions' },
    });

    it('a viewer reads but changes nothing (403)', async () => {
      const account = await newAccount(`viewer-target-${engine}`, '3');
      expect((await call('GET', '/accounts', tokens.viewer)).status).toBe(200);
      expect((await call('GET', `/accounts/${String(account.id)}`, tokens.viewer)).status).toBe(200);
      expect((await call('GET', `/accounts/${String(account.id)}/ledger`, tokens.viewer)).status).toBe(200);
      expect((await call('GET', '/audit', tokens.viewer)).status).toBe(200);
      const refusals = [
        await call('POST', '/accounts', tokens.viewer, { name: 'never' }),
        await call('PATCH', `/accounts/${String(account.id)}`, tokens.viewer, { name: 'never' }),
        await call('POST', `/accounts/${String(account.id)}/disable`, tokens.viewer),
        await call('POST', `/accounts/${String(account.id)}/credit`, tokens.viewer, { amount_usd: '1', reason: 'no' }),
        await call('POST', `/accounts/${String(account.id)}/debit`, tokens.viewer, { amount_usd: '1', reason: 'no' }),
      ];
      for (const answer of refusals) {
        expect(answer.status).toBe(403);
        expect(answer.body).toEqual(forbidden('operator', 'viewer'));
        expect(answer.requestId).toMatch(/^req_/);
      }
      const after = await call('GET', `/accounts/${String(account.id)}`, tokens.viewer);
      expect(after.body).toMatchObject({ name: `viewer-target-${engine}`, balance_usd: '3', disabled: false });
    });

    it('an operator manages accounts but not admin tokens (403)', async () => {
      for (const answer of [
        await call('GET', '/admin-tokens', tokens.operator),
        await call('POST', '/admin-tokens', tokens.operator, { role: 'owner' }),
        await call('POST', `/admin-tokens/${ids.viewer}/disable`, tokens.operator),
        await call('GET', '/admin-tokens', tokens.viewer),
      ]) {
        expect(answer.status).toBe(403);
        expect((answer.body.error as Record<string, unknown>).code).toBe('insufficient_permissions');
      }
    });
  });

  describe('accounts', () => {
    it('create, get by id and by name, rename; refuses a taken name (409) and bad input (400)', async () => {
      const created = await newAccount(`acme-${engine}`, '12.5');
      expect(created).toMatchObject({ id: expect.stringMatching(/^acct_/), name: `acme-${engine}`, balance_usd: '12.5', reserved_usd: '0', disabled: false });
      expect((await call('GET', `/accounts/${String(created.id)}`, tokens.viewer)).body).toEqual(created);
      expect((await call('GET', `/accounts/acme-${engine}`, tokens.viewer)).body).toEqual(created);

      const renamed = await call('PATCH', `/accounts/${String(created.id)}`, tokens.operator, { name: `acme-renamed-${engine}` });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ id: created.id, name: `acme-renamed-${engine}` });

      await newAccount(`other-${engine}`);
      const taken = await call('PATCH', `/accounts/${String(created.id)}`, tokens.operator, { name: `other-${engine}` });
      expect(taken.status).toBe(409);
      expect(taken.body).toEqual({ error: { message: `an account named "other-${engine}" already exists`, type: 'invalid_request_error', code: 'conflict' } });
      const duplicate = await call('POST', '/accounts', tokens.operator, { name: `other-${engine}` });
      expect(duplicate.status).toBe(409);

      const bad: Array<[unknown, string | undefined]> = [
        [{ name: '' }, undefined],
        [{ name: 'acct_looks_like_an_id' }, undefined],
        [{ name: 'fine', balance_usd: '-1' }, 'balance_usd'],
        [{ name: 'fine', balance_usd: 5 }, 'balance_usd'],
        [{}, 'name'],
      ];
      for (const [body, param] of bad) {
        const answer = await call('POST', '/accounts', tokens.operator, body);
        expect(answer.status, JSON.stringify(body)).toBe(400);
        const error = answer.body.error as Record<string, unknown>;
        expect(error.type).toBe('invalid_request_error');
        expect(error.param).toBe(param);
      }
      const notJson = await fetch(`${harness.baseUrl}/admin/v1/accounts`, { method: 'POST', headers: { authorization: `Bearer ${tokens.operator}`, 'content-type': 'application/json' }, body: '{"name":' });
      expect(notJson.status).toBe(400);
      expect(((await notJson.json()) as { error: { message: string } }).error.message).toBe('Invalid request: invalid JSON request body.');
    });

    it('answers 404 for an unknown account on every account route', async () => {
      const missing = '/accounts/acct_missing';
      for (const [method, path, body] of [
        ['GET', missing, undefined],
        ['PATCH', missing, { name: 'x' }],
        ['POST', `${missing}/disable`, undefined],
        ['POST', `${missing}/enable`, undefined],
        ['POST', `${missing}/credit`, { amount_usd: '1', reason: 'r' }],
        ['POST', `${missing}/debit`, { amount_usd: '1', reason: 'r' }],
        ['GET', `${missing}/ledger`, undefined],
      ] as const) {
        const answer = await call(method, path, tokens.operator, body);
        expect(answer.status, `${method} ${path}`).toBe(404);
        expect(answer.body).toEqual({ error: { message: 'no account with id or name "acct_missing"', type: 'invalid_request_error', code: 'not_found' } });
      }
    });

    it('lists every account once across pages, and filters by name and status', async () => {
      const tag = `page-${engine}-${Date.now()}`;
      const made = [];
      for (let index = 0; index < 5; index += 1) made.push(await newAccount(`${tag}-${index}`));
      await call('POST', `/accounts/${String(made[1]?.id)}/disable`, tokens.operator);
      await call('POST', `/accounts/${String(made[3]?.id)}/disable`, tokens.operator);

      const everything = await allPages(call, `/accounts?name=${tag}`, tokens.viewer, 2);
      expect(everything.pages).toBe(3);
      expect(everything.rows.map((row) => row.name)).toEqual(made.map((row) => row.name));

      const disabled = await allPages(call, `/accounts?name=${tag}&status=disabled`, tokens.viewer, 1);
      expect(disabled.rows.map((row) => row.id)).toEqual([made[1]?.id, made[3]?.id]);
      const active = await allPages(call, `/accounts?name=${tag}&status=active`, tokens.viewer, 50);
      expect(active.rows.map((row) => row.id)).toEqual([made[0]?.id, made[2]?.id, made[4]?.id]);
      // A name filter is a substring, not a pattern: `%` matches only itself.
      expect((await call('GET', '/accounts?name=%25', tokens.viewer)).body.data).toEqual([]);

      const all = await allPages(call, '/accounts', tokens.viewer, 3);
      expect(new Set(all.rows.map((row) => row.id)).size).toBe(all.rows.length);
    });

    it('refuses a bad limit, status or cursor with 400 naming the field', async () => {
      for (const [query, param] of [
        ['limit=0', 'limit'],
        ['limit=201', 'limit'],
        ['limit=abc', 'limit'],
        ['status=gone', 'status'],
        ['cursor=not-a-cursor', 'cursor'],
      ]) {
        const answer = await call('GET', `/accounts?${query}`, tokens.viewer);
        expect(answer.status, query).toBe(400);
        expect((answer.body.error as Record<string, unknown>).param).toBe(param);
      }
    });

    it('credits and debits with a reason on the ledger; a debit never takes the balance below zero', async () => {
      const account = await newAccount(`money-${engine}`, '1');
      const id = String(account.id);
      const credited = await call('POST', `/accounts/${id}/credit`, tokens.operator, { amount_usd: '2.5', reason: 'goodwill' });
      expect(credited.body).toMatchObject({ balance_usd: '3.5' });

      const tooMuch = await call('POST', `/accounts/${id}/debit`, tokens.operator, { amount_usd: '3.500000001', reason: 'too much' });
      expect(tooMuch.status).toBe(409);
      expect(tooMuch.body).toEqual({
        error: { message: 'a debit of 3.500000001 USD would take the balance below zero (available: 3.5 USD)', type: 'invalid_request_error', code: 'conflict' },
      });
      expect((await call('GET', `/accounts/${id}`, tokens.viewer)).body).toMatchObject({ balance_usd: '3.5' });

      const debited = await call('POST', `/accounts/${id}/debit`, tokens.operator, { amount_usd: '3.5', reason: 'refund reversed' });
      expect(debited.status).toBe(200);
      expect(debited.body).toMatchObject({ balance_usd: '0' });
      expect((await call('POST', `/accounts/${id}/debit`, tokens.operator, { amount_usd: '0.000000001', reason: 'one nano' })).status).toBe(409);

      for (const body of [{ amount_usd: '0', reason: 'zero' }, { amount_usd: '1' }, { amount_usd: '1', reason: '  ' }, { amount_usd: '1e3', reason: 'exp' }]) {
        expect((await call('POST', `/accounts/${id}/credit`, tokens.operator, body)).status, JSON.stringify(body)).toBe(400);
      }

      const ledger = await allPages(call, `/accounts/${id}/ledger`, tokens.viewer, 1);
      expect(ledger.pages).toBe(3);
      expect([...ledger.rows].reverse().map((row) => [row.kind, row.amount_usd, row.note])).toEqual([
        ['credit', '1', 'opening balance'],
        ['credit', '2.5', 'goodwill'],
        ['debit', '3.5', 'refund reversed'],
      ]);
    });

    it('refuses an amount beyond 1,000,000,000 USD with a 400 naming the field, and a credit past that balance with a 409', async () => {
      const account = await newAccount(`billionaire-${engine}`);
      const id = String(account.id);
      const key = await call('POST', '/keys', tokens.operator, { account: id });
      const tooLarge = (param: string) => ({ error: { message: `Invalid request: ${param}: must be at most 1000000000 USD`, type: 'invalid_request_error', param, code: 'invalid_value' } });
      for (const amount of ['99999999999999999999', '1000000000.000000001', '9223372036854775808']) {
        const refused: Array<[string, string, Record<string, unknown>, string]> = [
          ['POST', '/accounts', { name: `rich-${engine}`, balance_usd: amount }, 'balance_usd'],
          ['POST', `/accounts/${id}/credit`, { amount_usd: amount, reason: 'huge' }, 'amount_usd'],
          ['POST', `/accounts/${id}/debit`, { amount_usd: amount, reason: 'huge' }, 'amount_usd'],
          ['PATCH', `/accounts/${id}`, { low_balance_threshold_usd: amount }, 'low_balance_threshold_usd'],
          ['POST', '/keys', { account: id, budget: { limit_usd: amount, period: 'day' } }, 'budget.limit_usd'],
          ['PATCH', `/keys/${String(key.body.id)}`, { budget: { limit_usd: amount } }, 'budget.limit_usd'],
        ];
        for (const [method, path, body, param] of refused) {
          const answer = await call(method, path, tokens.operator, body);
          expect(answer.status, `${method} ${path} ${amount}`).toBe(400);
          expect(answer.body).toEqual(tooLarge(param));
        }
      }
      expect((await call('GET', `/accounts/${id}`, tokens.viewer)).body).toMatchObject({ balance_usd: '0', low_balance_threshold_usd: null });

      // The maximum itself is an amount like any other; the balance may not pass it.
      const credited = await call('POST', `/accounts/${id}/credit`, tokens.operator, { amount_usd: '1000000000', reason: 'the most' });
      expect(credited.status).toBe(200);
      expect(credited.body).toMatchObject({ balance_usd: '1000000000' });
      const beyond = await call('POST', `/accounts/${id}/credit`, tokens.operator, { amount_usd: '0.000000001', reason: 'one nano more' });
      expect(beyond.status).toBe(409);
      expect(beyond.body).toEqual({
        error: { message: 'a credit of 0.000000001 USD would take the balance above the maximum of 1000000000 USD (balance: 1000000000 USD)', type: 'invalid_request_error', code: 'conflict' },
      });
      expect((await call('POST', `/keys`, tokens.operator, { account: id, budget: { limit_usd: '1000000000', period: 'total' } })).status).toBe(201);
      expect((await call('GET', `/accounts/${id}`, tokens.viewer)).body).toMatchObject({ balance_usd: '1000000000' });
    });

    it('concurrent debits never overdraw: of 10 debits of 1 USD on 4 USD, exactly 4 pass', async () => {
      const account = await newAccount(`race-${engine}`, '4');
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => call('POST', `/accounts/${String(account.id)}/debit`, tokens.operator, { amount_usd: '1', reason: 'race' })),
      );
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(4);
      expect(answers.filter((answer) => answer.status === 409)).toHaveLength(6);
      expect((await call('GET', `/accounts/${String(account.id)}`, tokens.viewer)).body).toMatchObject({ balance_usd: '0' });
    });

    it("disabling an account refuses its keys on /v1 within a second; enabling lets them back", async () => {
      const { accountId, secret } = await harness.newAccount('1');
      const models = async () => (await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status;
      expect(await models()).toBe(200);
      expect((await call('POST', `/accounts/${accountId}/disable`, tokens.operator)).body).toMatchObject({ disabled: true });
      const deadline = Date.now() + 1_000;
      let status = await models();
      while (status !== 401 && Date.now() < deadline) status = await models();
      expect(status).toBe(401);
      expect((await call('POST', `/accounts/${accountId}/enable`, tokens.operator)).body).toMatchObject({ disabled: false });
      expect(await models()).toBe(200);
    });
  });

  describe('unknown fields', () => {
    const unknownField = (param: string) => ({
      error: { message: `Invalid request: ${param}: unrecognized field.`, type: 'invalid_request_error', param, code: 'unknown_parameter' },
    });

    it('refuses a body field no route takes with a 400 naming it, and changes nothing', async () => {
      const account = await newAccount(`strict-${engine}`, '2');
      const id = String(account.id);
      const key = await call('POST', '/keys', tokens.operator, { account: id, name: 'strict' });
      expect(key.status).toBe(201);
      const keyId = String(key.body.id);
      const refused: Array<[string, string, string, Record<string, unknown>, string]> = [
        ['a rename that also sets the balance', 'PATCH', `/accounts/${id}`, { name: `strict-renamed-${engine}`, balance_usd: '1000' }, 'balance_usd'],
        ['an account created with a misspelt field', 'POST', '/accounts', { name: `strict-new-${engine}`, balance: '5' }, 'balance'],
        ['a credit with the amount under another name', 'POST', `/accounts/${id}/credit`, { amount_usd: '1', reason: 'top-up', note: 'x' }, 'note'],
        ['a debit with an unknown field', 'POST', `/accounts/${id}/debit`, { amount_usd: '1', reason: 'fix', force: true }, 'force'],
        ['a key created with an unknown field', 'POST', '/keys', { account: id, name: 'k', rate_limit: 10 }, 'rate_limit'],
        ['a key change with an unknown budget field', 'PATCH', `/keys/${keyId}`, { budget: { limit_usd: '5', period: 'day', rollover: true } }, 'budget.rollover'],
        ['a key change with an unknown field', 'PATCH', `/keys/${keyId}`, { name: 'renamed', disabled: true }, 'disabled'],
        ['an admin token with an unknown field', 'POST', '/admin-tokens', { role: 'viewer', scopes: ['all'] }, 'scopes'],
      ];
      for (const [what, method, path, body, param] of refused) {
        const answer = await call(method, path, method === 'POST' && path === '/admin-tokens' ? tokens.owner : tokens.operator, body);
        expect(answer.status, what).toBe(400);
        expect(answer.body, what).toEqual(unknownField(param));
        expect(answer.requestId).toMatch(/^req_/);
      }
      expect((await call('GET', `/accounts/${id}`, tokens.viewer)).body).toMatchObject({ name: `strict-${engine}`, balance_usd: '2' });
      expect((await call('GET', `/accounts/strict-new-${engine}`, tokens.viewer)).status).toBe(404);
      expect((await call('GET', `/keys/${keyId}`, tokens.viewer)).body).toMatchObject({ name: 'strict', disabled: false, budget: null });
    });

    it("names an unknown field of any length, cut to 256 characters and … like every echo", async () => {
      const answer = await call('PATCH', `/accounts/${String((await newAccount(`strict-long-${engine}`)).id)}`, tokens.operator, { ['f'.repeat(100_000)]: 1 });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(unknownField(`${'f'.repeat(256)}…`));
    });
  });

  describe('admin tokens', () => {
    it('an owner creates a token (secret once), lists them without secrets, and disables one (then 401)', async () => {
      const created = await call('POST', '/admin-tokens', tokens.owner, { role: 'viewer', name: 'dashboard' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ id: expect.stringMatching(/^adm_/), role: 'viewer', name: 'dashboard', disabled: false, token: expect.stringMatching(/^tg-admin-/) });
      const secret = String(created.body.token);
      expect((await call('GET', '/accounts', secret)).status).toBe(200);

      const listed = await call('GET', '/admin-tokens', tokens.owner);
      expect(listed.status).toBe(200);
      const text = JSON.stringify(listed.body);
      expect(text).toContain(String(created.body.id));
      expect(text).not.toContain(secret);
      expect(text).not.toContain('hash');

      expect((await call('POST', `/admin-tokens/${String(created.body.id)}/disable`, tokens.owner)).body).toMatchObject({ disabled: true });
      expect((await call('GET', '/accounts', secret)).status).toBe(401);
      expect((await call('POST', `/admin-tokens/${String(created.body.prefix)}/enable`, tokens.owner)).body).toMatchObject({ disabled: false });
      expect((await call('GET', '/accounts', secret)).status).toBe(200);

      expect((await call('POST', '/admin-tokens', tokens.owner, { role: 'root' })).status).toBe(400);
      expect((await call('POST', '/admin-tokens/adm_missing/disable', tokens.owner)).status).toBe(404);
    });
  });

  describe('audit log', () => {
    it('records every change with who, what, when, before and after', async () => {
      const started = Date.now();
      const account = await newAccount(`audited-${engine}`, '2');
      const id = String(account.id);
      await call('PATCH', `/accounts/${id}`, tokens.operator, { name: `audited-renamed-${engine}` });
      await call('POST', `/accounts/${id}/credit`, tokens.operator, { amount_usd: '1', reason: 'bonus' });
      await call('POST', `/accounts/${id}/debit`, tokens.operator, { amount_usd: '0.5', reason: 'fee' });
      await call('POST', `/accounts/${id}/debit`, tokens.operator, { amount_usd: '100', reason: 'refused, so not audited' });
      await call('POST', `/accounts/${id}/disable`, tokens.operator);
      await call('POST', `/accounts/${id}/enable`, tokens.owner);
      await call('PATCH', `/accounts/${id}`, tokens.owner, { low_balance_threshold_usd: '1' });

      const audit = await allPages(call, `/audit?target_type=account&target_id=${id}`, tokens.viewer, 2);
      expect([...audit.rows].reverse().map((row) => [row.action, row.admin_token_id])).toEqual([
        ['account.create', ids.operator],
        ['account.rename', ids.operator],
        ['account.credit', ids.operator],
        ['account.debit', ids.operator],
        ['account.disable', ids.operator],
        ['account.enable', ids.owner],
        ['account.set_low_balance_threshold', ids.owner],
      ]);
      const [create, rename, credit, debit, disable] = [...audit.rows].reverse();
      expect(create?.before).toBeNull();
      expect(create?.after).toMatchObject({ id, name: `audited-${engine}`, balance_usd: '2' });
      expect(rename?.before).toMatchObject({ name: `audited-${engine}` });
      expect(rename?.after).toMatchObject({ name: `audited-renamed-${engine}` });
      expect(credit?.before).toMatchObject({ balance_usd: '2' });
      expect(credit?.after).toMatchObject({ balance_usd: '3', note: 'bonus' });
      expect(debit?.before).toMatchObject({ balance_usd: '3' });
      expect(debit?.after).toMatchObject({ balance_usd: '2.5', note: 'fee' });
      expect(disable?.before).toMatchObject({ disabled: false });
      expect(disable?.after).toMatchObject({ disabled: true });
      for (const row of audit.rows) {
        expect(row.target_type).toBe('account');
        expect(Date.parse(String(row.at))).toBeGreaterThanOrEqual(started - 1_000);
      }
    });

    it('records admin token changes by their owner, and pages the whole log', async () => {
      const created = await call('POST', '/admin-tokens', tokens.owner, { role: 'operator' });
      await call('POST', `/admin-tokens/${String(created.body.id)}/disable`, tokens.owner);
      await call('POST', `/admin-tokens/${String(created.body.id)}/enable`, tokens.owner);
      const rows = (await allPages(call, `/audit?target_type=admin_token&target_id=${String(created.body.id)}`, tokens.viewer, 1)).rows;
      expect([...rows].reverse().map((row) => [row.action, row.admin_token_id])).toEqual([
        ['admin_token.create', ids.owner],
        ['admin_token.disable', ids.owner],
        ['admin_token.enable', ids.owner],
      ]);
      expect(JSON.stringify(rows)).not.toContain(String(created.body.token));
      const whole = await allPages(call, '/audit', tokens.viewer, 7);
      const auditIds = whole.rows.map((row) => Number(row.id));
      expect(auditIds).toEqual([...auditIds].sort((a, b) => b - a)); // newest first
      expect(new Set(auditIds).size).toBe(auditIds.length);
    });
  });
});
