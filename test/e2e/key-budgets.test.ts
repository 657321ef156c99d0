/**
 * Key budgets end to end, on SQLite and PostgreSQL: the budget is checked in the same atomic hold
 * as the balance, so 60 concurrent requests on a budget that covers 10 admit exactly 10; the
 * refusal is the balance's 403 with a message naming the key's budget (the balance keeps the
 * spec's text); a daily budget starts afresh at 00:00 UTC, on the gateway's clock.
 *
 * The upstream reports far more usage than any hold covers, so every charge is capped at its hold
 * (recorded as an excess): each admitted request spends exactly one hold, whenever it settles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { formatUsd } from '../../src/billing/money.js';
import { adminClient } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble } from '../support/openai-upstream.js';

const BODY = { model: 'relay-model', messages: [{ role: 'user', content: 'spend' }], max_tokens: 50 };
const KEY_BUDGET_REFUSAL = {
  error: { message: "Insufficient key budget: this API key's spend limit cannot cover the request.", type: 'service_api_error', param: '', code: 'insufficient_user_quota' },
};
const BALANCE_REFUSAL = { error: { message: 'Insufficient balance.', type: 'service_api_error', param: '', code: 'insufficient_user_quota' } };
const overReporting = () => ({ prompt_tokens: 5_000_000, completion_tokens: 1_000_000, total_tokens: 6_000_000 });

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What one request of BODY holds: its charge, capped at the hold (an excess shows it was capped). */
async function holdOfOneRequest(harness: Harness): Promise<bigint> {
  const { accountId, secret } = await harness.newAccount('100');
  expect((await harness.post('/v1/chat/completions', BODY, secret)).status).toBe(200);
  await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
  const ledger = await harness.store.listLedger(accountId);
  expect(ledger.filter((entry) => entry.kind === 'excess')).toHaveLength(1);
  const charges = ledger.filter((entry) => entry.kind === 'charge');
  expect(charges).toHaveLength(1);
  return charges[0]!.amountNanos;
}

describe.each(engines)('key budgets on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let hold: bigint;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ usage: overReporting });
    harness = await startHarness({ engine, catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl }), env: { TEST_UPSTREAM_KEY: 'sk-upstream-secret' } });
    hold = await holdOfOneRequest(harness);
  });

  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it('60 concurrent requests on a key budget that covers 10 admit exactly 10, and spend exactly the budget', async () => {
    const { accountId, keyId, secret } = await harness.newAccount('100', { budget: { limitUsd: formatUsd(hold * 10n), period: 'day' } });
    // Known to the key cache first: 60 first lookups at once would count against the address's
    // allowance of failed authentications until they answer.
    expect((await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
    const responses = await Promise.all(Array.from({ length: 60 }, () => harness.post('/v1/chat/completions', BODY, secret)));
    const bodies = await Promise.all(responses.map(async (response) => ({ status: response.status, body: (await response.json()) as unknown, requestId: response.headers.get('x-request-id') })));
    const admitted = bodies.filter((answer) => answer.status === 200);
    expect(admitted).toHaveLength(10);
    const refused = bodies.filter((answer) => answer.status === 403);
    expect(refused).toHaveLength(50);
    for (const answer of refused) expect(answer.body).toEqual(KEY_BUDGET_REFUSAL);

    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    const charges = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges.map((charge) => charge.requestId).sort()).toEqual(admitted.map((answer) => answer.requestId).sort());
    expect(charges.reduce((sum, charge) => sum + charge.amountNanos, 0n)).toBe(hold * 10n);
    const account = (await harness.store.findAccount(accountId))!;
    expect(account).toMatchObject({ balanceNanos: 100_000_000_000n - hold * 10n, reservedNanos: 0n });

    const viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    const got = await adminClient(harness.baseUrl)('GET', `/keys/${keyId}`, viewer);
    expect(got.body.budget).toMatchObject({ period: 'day', limit_usd: formatUsd(hold * 10n), spent_usd: formatUsd(hold * 10n), reserved_usd: '0', remaining_usd: '0' });
  }, 30_000);

  it('the balance keeps the spec 403 text; the key budget its own, in each client shape', async () => {
    const poor = await harness.newAccount('0', { budget: { limitUsd: '100', period: 'total' } });
    const balance = await harness.post('/v1/chat/completions', BODY, poor.secret);
    expect(balance.status).toBe(403);
    expect(await balance.json()).toEqual(BALANCE_REFUSAL);

    const capped = await harness.newAccount('100', { budget: { limitUsd: formatUsd(hold - 1n), period: 'month' } });
    const chat = await harness.post('/v1/chat/completions', BODY, capped.secret);
    expect(chat.status).toBe(403);
    expect(await chat.json()).toEqual(KEY_BUDGET_REFUSAL);
    expect(chat.headers.get('x-request-id')).toMatch(/^req_/);
    const messages = await harness.post('/v1/messages', { model: 'relay-model', max_tokens: 50, messages: [{ role: 'user', content: 'spend' }] }, capped.secret);
    expect(messages.status).toBe(403);
    expect(await messages.json()).toEqual({ type: 'error', error: { type: 'permission_error', message: KEY_BUDGET_REFUSAL.error.message } });
    // Nothing was reserved by the refusals.
    expect(await harness.store.findAccount(capped.accountId)).toMatchObject({ balanceNanos: 100_000_000_000n, reservedNanos: 0n });
  });

  it('raising the budget through the admin API lets the key spend again at once', async () => {
    const { keyId, secret } = await harness.newAccount('100', { budget: { limitUsd: formatUsd(hold), period: 'total' } });
    expect((await harness.post('/v1/chat/completions', BODY, secret)).status).toBe(200);
    expect((await harness.post('/v1/chat/completions', BODY, secret)).status).toBe(403);
    const operator = (await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR)).secret;
    const raised = await adminClient(harness.baseUrl)('PATCH', `/keys/${keyId}`, operator, { budget: { limit_usd: formatUsd(hold * 2n) } });
    expect(raised.body.budget).toEqual({ period: 'total', limit_usd: formatUsd(hold * 2n) });
    expect((await harness.post('/v1/chat/completions', BODY, secret)).status).toBe(200);
    expect((await harness.post('/v1/chat/completions', BODY, secret)).status).toBe(403);
  });
});

describe.each(engines)('a daily key budget on a moved clock, on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let clock = Date.parse('2031-03-04T23:59:30.000Z');

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ usage: overReporting });
    harness = await startHarness({ engine, catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl }), env: { TEST_UPSTREAM_KEY: 'sk-upstream-secret' }, now: () => clock });
  });

  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it('starts afresh at 00:00 UTC, and not a millisecond before', async () => {
    const hold = await holdOfOneRequest(harness);
    const { accountId, secret } = await harness.newAccount('100', { budget: { limitUsd: formatUsd(hold), period: 'day' } });
    const status = async () => (await harness.post('/v1/chat/completions', BODY, secret)).status;
    expect(await status()).toBe(200);
    expect(await status()).toBe(403);
    clock = Date.parse('2031-03-04T23:59:59.999Z');
    expect(await status()).toBe(403);
    clock = Date.parse('2031-03-05T00:00:00.000Z');
    expect(await status()).toBe(200);
    expect(await status()).toBe(403);
    clock = Date.parse('2031-03-06T07:00:00.000Z');
    expect(await status()).toBe(200);

    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    const keyId = (await harness.store.listKeys(accountId))[0]!.id;
    for (const day of ['2031-03-04T00:00:00Z', '2031-03-05T00:00:00Z', '2031-03-06T00:00:00Z']) {
      expect(await harness.store.keySpend(keyId, { period: 'day', start: new Date(day) })).toEqual({ spentNanos: hold, reservedNanos: 0n });
    }
  });
});
