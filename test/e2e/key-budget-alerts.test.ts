/**
 * `key_budget.80` and `key_budget.100` end to end, on SQLite and PostgreSQL: a real receiver on
 * loopback gets each once per budget period, signed, when the key's spend reaches 80% and then all
 * of its budget; a daily budget fires again on the next day (the gateway's clock, moved).
 *
 * The upstream reports far more usage than any hold covers, so every charge is exactly one hold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/billing/money.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble } from '../support/openai-upstream.js';
import { startWebhookReceiver, until, verifyWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET = 'whsec-budgets-0123456789';
const BODY = { model: 'relay-model', messages: [{ role: 'user', content: 'spend' }], max_tokens: 50 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(engines)('key budget alerts on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let receiver: WebhookReceiver;
  let clock = Date.parse('2031-07-09T10:00:00.000Z');
  let hold: bigint;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ usage: () => ({ prompt_tokens: 5_000_000, completion_tokens: 1_000_000, total_tokens: 6_000_000 }) });
    receiver = await startWebhookReceiver();
    const catalog = {
      ...(testCatalog({ upstreamBaseUrl: upstream.baseUrl }) as Record<string, unknown>),
      alerts: {
        webhooks: [{ url: receiver.url, secret_env: 'BUDGET_HOOK_SECRET', events: ['key_budget.80', 'key_budget.100'] }],
        check_ms: 50,
        delivery: { poll_ms: 25, timeout_ms: 2_000, first_retry_ms: 50, max_retry_ms: 200, max_age_seconds: 120 },
      },
    };
    harness = await startHarness({ engine, catalog, env: { TEST_UPSTREAM_KEY: 'sk-upstream-secret', BUDGET_HOOK_SECRET: SECRET }, now: () => clock });
    const probe = await harness.newAccount('100');
    expect((await harness.post('/v1/chat/completions', BODY, probe.secret)).status).toBe(200);
    await until('the probe settled', async () => (await harness.store.countOpenHolds(probe.accountId)) === 0);
    hold = (await harness.store.listLedger(probe.accountId)).find((entry) => entry.kind === 'charge')!.amountNanos;
  });

  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
    await receiver?.close();
  });

  const eventsOf = (keyId: string) => receiver.accepted().filter((webhook) => webhook.body.data.key_id === keyId);

  async function spend(secret: string, accountId: string, requests: number): Promise<void> {
    for (let index = 0; index < requests; index += 1) expect((await harness.post('/v1/chat/completions', BODY, secret)).status).toBe(200);
    await until('the requests settled', async () => (await harness.store.countOpenHolds(accountId)) === 0);
  }

  it('fires 80% and then 100% once each, signed, with the key and its period', async () => {
    const { accountId, keyId, secret } = await harness.newAccount('100', { name: 'ci', budget: { limitUsd: formatUsd(hold * 10n), period: 'total' } });
    await spend(secret, accountId, 7);
    // 70%: nothing, over several checks.
    await sleep(300);
    expect(eventsOf(keyId)).toEqual([]);
    await spend(secret, accountId, 1);
    await until('key_budget.80', () => eventsOf(keyId).length === 1);
    const [eighty] = eventsOf(keyId);
    expect(eighty?.body).toMatchObject({
      type: 'key_budget.80',
      data: { key_id: keyId, key_name: 'ci', account_id: accountId, period: 'total', period_start: '1970-01-01T00:00:00.000Z', resets_at: null, limit_usd: formatUsd(hold * 10n), spent_usd: formatUsd(hold * 8n) },
    });
    expect(verifyWebhook(SECRET, eighty!, clock / 1000)).toBe(true);

    await spend(secret, accountId, 2);
    await until('key_budget.100', () => eventsOf(keyId).length === 2);
    expect(eventsOf(keyId)[1]?.body).toMatchObject({ type: 'key_budget.100', data: { key_id: keyId, spent_usd: formatUsd(hold * 10n) } });
    expect((await harness.post('/v1/chat/completions', BODY, secret)).status).toBe(403);
    await sleep(300);
    expect(eventsOf(keyId).map((webhook) => webhook.body.type)).toEqual(['key_budget.80', 'key_budget.100']);
  });

  it('a daily budget fires again in its next period, and once only there too', async () => {
    const { accountId, keyId, secret } = await harness.newAccount('100', { budget: { limitUsd: formatUsd(hold * 5n), period: 'day' } });
    await spend(secret, accountId, 4);
    await until('key_budget.80 of the first day', () => eventsOf(keyId).length === 1);
    expect(eventsOf(keyId)[0]?.body.data).toMatchObject({ period: 'day', period_start: '2031-07-09T00:00:00.000Z', resets_at: '2031-07-10T00:00:00.000Z' });

    clock = Date.parse('2031-07-10T00:00:01.000Z');
    await sleep(300);
    expect(eventsOf(keyId)).toHaveLength(1);
    await spend(secret, accountId, 4);
    await until('key_budget.80 of the second day', () => eventsOf(keyId).length === 2);
    expect(eventsOf(keyId)[1]?.body.data).toMatchObject({ period: 'day', period_start: '2031-07-10T00:00:00.000Z', spent_usd: formatUsd(hold * 4n) });
    await sleep(300);
    expect(eventsOf(keyId)).toHaveLength(2);
  });
});
