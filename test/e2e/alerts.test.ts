/**
 * Alert webhooks end to end, on SQLite and PostgreSQL: the real server, real receivers on
 * loopback (one that answers 500 before 200, one that is down and then comes up), signatures
 * checked with the secret by the test's own code, the same event id on every attempt, and
 * `balance.low` raised once per crossing by two instances sharing one database.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { webhookIdOf } from '../../src/alerts/alert-events.js';
import { parseConfig } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/server/gateway.js';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { adminClient, type AdminCall } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startWebhookReceiver, until, verifyWebhook, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';

const SECRETS = { flaky: 'whsec-flaky-0123456789', late: 'whsec-late-abcdef', ops: 'whsec-ops-9876543210' };
const FAST = { check_ms: 50, delivery: { poll_ms: 25, timeout_ms: 2_000, first_retry_ms: 50, max_retry_ms: 200, max_age_seconds: 120 } };

/** A loopback port nothing listens on yet: bound, then released. */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function catalogWith(webhooks: unknown[]): unknown {
  return { ...(testCatalog() as Record<string, unknown>), alerts: { webhooks, ...FAST } };
}

function eventIdOf(webhook: ReceivedWebhook): string {
  return String(webhook.headers['tollgate-event-id']);
}

describe.each(engines)('alert webhooks on %s', (engine) => {
  let harness: Harness;
  let call: AdminCall;
  let operator: string;
  let viewer: string;
  let flaky: WebhookReceiver;
  let ops: WebhookReceiver;
  let late: WebhookReceiver | undefined;
  let latePort: number;
  let second: { gateway: Gateway; store: Store; ownStore: boolean } | undefined;

  beforeAll(async () => {
    // 500, 500, then 200: the first delivery is retried twice.
    flaky = await startWebhookReceiver({ status: (index) => (index < 2 ? 500 : 200) });
    ops = await startWebhookReceiver();
    latePort = await freePort();
    const webhooks = [
      { url: flaky.url, secret_env: 'FLAKY_SECRET', events: ['balance.low'] },
      { url: `http://127.0.0.1:${latePort}/hooks/late`, secret_env: 'LATE_SECRET', events: ['balance.low'] },
      { url: ops.url, secret_env: 'OPS_SECRET', events: ['balance.low', 'target.down', 'target.up'] },
    ];
    const env = { FLAKY_SECRET: SECRETS.flaky, LATE_SECRET: SECRETS.late, OPS_SECRET: SECRETS.ops };
    harness = await startHarness({ engine, catalog: catalogWith(webhooks), env });
    call = adminClient(harness.baseUrl);
    operator = (await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR)).secret;
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    // A second instance on the same database, with the same catalog: its checker and deliverer
    // race the first one's. Two SQLite connections in one process cannot wait for each other, so
    // on SQLite it shares the first one's store (its queries still race, one transaction at a time).
    const store = engine === 'postgres' ? await openStore(harness.database.url, { migrate: false }) : harness.store;
    const gateway = await createGateway({
      config: parseConfig(catalogWith(webhooks)),
      store,
      limiter: createMemoryLimiter(),
      logger: pino({ level: 'silent' }),
      env,
    });
    second = { gateway, store, ownStore: engine === 'postgres' };
  });

  afterAll(async () => {
    await second?.gateway.close();
    if (second?.ownStore === true) await second.store.close();
    await harness?.close();
    await Promise.all([flaky?.close(), ops?.close(), late?.close()]);
  });

  async function accountWithThreshold(name: string, balanceUsd: string, thresholdUsd: string): Promise<string> {
    const created = await call('POST', '/accounts', operator, { name, balance_usd: balanceUsd });
    expect(created.status).toBe(201);
    const patched = await call('PATCH', `/accounts/${name}`, operator, { low_balance_threshold_usd: thresholdUsd });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name, low_balance_threshold_usd: thresholdUsd });
    return String(created.body.id);
  }

  const lowBalanceEvents = (receiver: WebhookReceiver, accountId: string) =>
    receiver.accepted().filter((webhook) => webhook.body.type === 'balance.low' && webhook.body.data.account_id === accountId);

  it('sets the threshold through the admin API: operator only, audited, bad input refused', async () => {
    const created = await call('POST', '/accounts', operator, { name: `thresholds-${engine}`, balance_usd: '10' });
    const id = String(created.body.id);
    expect(created.body.low_balance_threshold_usd).toBeNull();
    const refused = await call('PATCH', `/accounts/${id}`, viewer, { low_balance_threshold_usd: '1' });
    expect(refused.status).toBe(403);
    for (const [body, param] of [
      [{ low_balance_threshold_usd: '0' }, undefined],
      [{ low_balance_threshold_usd: '-2' }, 'low_balance_threshold_usd'],
      [{ low_balance_threshold_usd: '1.0000000001' }, 'low_balance_threshold_usd'],
      [{ low_balance_threshold_usd: 5 }, 'low_balance_threshold_usd'],
      [{}, undefined],
    ] as const) {
      const answer = await call('PATCH', `/accounts/${id}`, operator, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect((answer.body.error as Record<string, unknown>).param, JSON.stringify(body)).toBe(param);
    }
    const both = await call('PATCH', `/accounts/${id}`, operator, { name: `thresholds-renamed-${engine}`, low_balance_threshold_usd: '2.5' });
    expect(both.body).toMatchObject({ name: `thresholds-renamed-${engine}`, low_balance_threshold_usd: '2.5' });
    const removed = await call('PATCH', `/accounts/${id}`, operator, { low_balance_threshold_usd: null });
    expect(removed.body).toMatchObject({ low_balance_threshold_usd: null });
    const audit = await call('GET', `/audit?target_type=account&target_id=${id}`, viewer);
    const actions = (audit.body.data as Array<Record<string, unknown>>).map((entry) => [entry.action, (entry.after as Record<string, unknown>).low_balance_threshold_usd]);
    // Newest first.
    expect(actions.reverse()).toEqual([
      ['account.create', null],
      ['account.rename', null],
      ['account.set_low_balance_threshold', '2.5'],
      ['account.set_low_balance_threshold', null],
    ]);
  });

  it('delivers balance.low signed, through a receiver that fails first and one that is down, with one event id on every attempt', async () => {
    const accountId = await accountWithThreshold(`low-${engine}`, '5', '1');
    // Above the threshold: nothing, however often the checkers look.
    const debit = await call('POST', `/accounts/${accountId}/debit`, operator, { amount_usd: '4.5', reason: 'spent' });
    expect(debit.status).toBe(200);

    await until('the flaky receiver to accept the event', () => lowBalanceEvents(flaky, accountId).length === 1);
    const attempts = flaky.received.filter((webhook) => webhook.body.data.account_id === accountId);
    expect(attempts.map((webhook) => webhook.status)).toEqual([500, 500, 200]);
    const eventId = eventIdOf(attempts[0]!);
    expect(eventId).toMatch(/^evt_[0-9a-f]{32}$/);
    for (const webhook of attempts) {
      expect(eventIdOf(webhook)).toBe(eventId);
      expect(webhook.body.id).toBe(eventId);
      expect(webhook.rawBody).toBe(attempts[0]!.rawBody);
      expect(webhook.headers['content-type']).toBe('application/json');
      expect(verifyWebhook(SECRETS.flaky, webhook)).toBe(true);
      // Signed with this webhook's secret, not another's; and a changed body no longer verifies.
      expect(verifyWebhook(SECRETS.ops, webhook)).toBe(false);
      const forged = webhook.rawBody.replace('"available_usd":"0.5"', '"available_usd":"9.5"');
      expect(forged).not.toBe(webhook.rawBody);
      expect(verifyWebhook(SECRETS.flaky, { ...webhook, rawBody: forged })).toBe(false);
    }
    expect(attempts[0]!.body).toEqual({
      id: eventId,
      type: 'balance.low',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      data: { account_id: accountId, account_name: `low-${engine}`, balance_usd: '0.5', reserved_usd: '0', available_usd: '0.5', threshold_usd: '1' },
    });

    // The same event reached the healthy receiver once, with its own signature.
    await until('the ops receiver to get the event', () => lowBalanceEvents(ops, accountId).length === 1);
    expect(eventIdOf(lowBalanceEvents(ops, accountId)[0]!)).toBe(eventId);
    expect(verifyWebhook(SECRETS.ops, lowBalanceEvents(ops, accountId)[0]!)).toBe(true);

    // The third receiver is down: its delivery waits, retried, until it comes up.
    await until('two failed attempts for the receiver that is down', async () => {
      const page = await call('GET', '/alerts/deliveries?state=pending', viewer);
      const rows = (page.body.data as Array<Record<string, unknown>>).filter((row) => row.event_id === eventId);
      return rows.length === 1 && Number(rows[0]!.attempts) >= 2 && String(rows[0]!.last_error).startsWith('could not be reached');
    });
    late = await startWebhookReceiver({ port: latePort, path: '/hooks/late' });
    await until('the receiver that came up to get the event', () => late!.accepted().length >= 1);
    expect(late.accepted().map(eventIdOf)).toEqual([eventId]);
    expect(verifyWebhook(SECRETS.late, late.accepted()[0]!)).toBe(true);

    await until('every delivery of the event to be recorded as delivered', async () => {
      const page = await call('GET', '/alerts/deliveries?state=delivered&limit=200', viewer);
      return (page.body.data as Array<Record<string, unknown>>).filter((row) => row.event_id === eventId).length === 3;
    });
    const delivered = await call('GET', '/alerts/deliveries?state=delivered&limit=200', viewer);
    const rows = (delivered.body.data as Array<Record<string, unknown>>).filter((row) => row.event_id === eventId);
    const attemptsBy = new Map(rows.map((row) => [row.webhook_id, Number(row.attempts)]));
    expect(attemptsBy.get(webhookIdOf(flaky.url))).toBe(3);
    expect(attemptsBy.get(webhookIdOf(ops.url))).toBe(1);
    expect(attemptsBy.get(webhookIdOf(late.url))).toBeGreaterThanOrEqual(3);
    expect(rows.every((row) => row.type === 'balance.low' && (row.event as Record<string, unknown>).id === eventId && row.next_attempt_at === null)).toBe(true);
  });

  it('raises balance.low once per crossing with two instances checking, and again after a top-up re-arms it', async () => {
    const accountId = await accountWithThreshold(`crossings-${engine}`, '3', '1');
    await call('POST', `/accounts/${accountId}/debit`, operator, { amount_usd: '2.5', reason: 'spent' });
    await until('the first crossing', () => lowBalanceEvents(ops, accountId).length >= 1);
    // Both instances keep checking while the account stays below: still one event.
    await new Promise((resolve) => setTimeout(resolve, 20 * FAST.check_ms));
    expect(lowBalanceEvents(ops, accountId)).toHaveLength(1);

    await call('POST', `/accounts/${accountId}/credit`, operator, { amount_usd: '5', reason: 'top-up' });
    await until('the alert to re-arm', async () => !(await harness.store.lowBalanceCrossings(1_000)).some((crossing) => crossing.accountId === accountId));
    await new Promise((resolve) => setTimeout(resolve, 5 * FAST.check_ms));
    expect(lowBalanceEvents(ops, accountId)).toHaveLength(1);

    await call('POST', `/accounts/${accountId}/debit`, operator, { amount_usd: '5', reason: 'spent again' });
    await until('the second crossing', () => lowBalanceEvents(ops, accountId).length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 20 * FAST.check_ms));
    const events = lowBalanceEvents(ops, accountId);
    expect(events).toHaveLength(2);
    expect(new Set(events.map(eventIdOf)).size).toBe(2);
    expect(events.map((webhook) => webhook.body.data.available_usd)).toEqual(['0.5', '0.5']);
  });

  it("the README's verification snippet accepts what was delivered and refuses a wrong secret or a changed body", async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const snippet = /```js\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Alerts')))?.[1];
    expect(snippet).toContain('export function verifyTollgateWebhook');
    const folder = mkdtempSync(join(tmpdir(), 'tollgate-readme-'));
    try {
      writeFileSync(join(folder, 'verify.mjs'), snippet ?? '');
      const { verifyTollgateWebhook } = (await import(pathToFileURL(join(folder, 'verify.mjs')).href)) as {
        verifyTollgateWebhook: (secret: string, headers: Record<string, unknown>, rawBody: string) => boolean;
      };
      const delivered = flaky.received.filter((webhook) => webhook.body.type === 'balance.low');
      expect(delivered.length).toBeGreaterThan(0);
      for (const webhook of delivered) {
        expect(verifyTollgateWebhook(SECRETS.flaky, webhook.headers, webhook.rawBody)).toBe(true);
        expect(verifyTollgateWebhook(SECRETS.late, webhook.headers, webhook.rawBody)).toBe(false);
        expect(verifyTollgateWebhook(SECRETS.flaky, webhook.headers, `${webhook.rawBody} `)).toBe(false);
        expect(verifyTollgateWebhook(SECRETS.flaky, { ...webhook.headers, 'tollgate-timestamp': '1' }, webhook.rawBody)).toBe(false);
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('lists deliveries for viewers only, by state, and refuses a bad state or cursor', async () => {
    expect((await call('GET', '/alerts/deliveries', null)).status).toBe(401);
    const page = await call('GET', '/alerts/deliveries?limit=1', viewer);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ data: [expect.objectContaining({ event_id: expect.stringMatching(/^evt_/), webhook_id: expect.stringMatching(/^wh_[0-9a-f]{16}$/) })], has_more: true });
    const next = await call('GET', `/alerts/deliveries?limit=1&cursor=${encodeURIComponent(String(page.body.next_cursor))}`, viewer);
    expect(Number((next.body.data as Array<Record<string, unknown>>)[0]!.id)).toBeLessThan(Number((page.body.data as Array<Record<string, unknown>>)[0]!.id));
    expect((await call('GET', '/alerts/deliveries?state=lost', viewer)).status).toBe(400);
    expect((await call('GET', '/alerts/deliveries?cursor=junk', viewer)).status).toBe(400);
  });
});

describe('alert webhook configuration', () => {
  it('refuses to start when a webhook secret variable is not set or blank, naming the variable', async () => {
    const webhooks = [{ url: 'http://127.0.0.1:9/hooks', secret_env: 'MISSING_WEBHOOK_SECRET', events: ['target.down'] }];
    const store = await openStore('sqlite::memory:');
    try {
      for (const env of [{}, { MISSING_WEBHOOK_SECRET: '  ' }]) {
        const starting = createGateway({ config: parseConfig(catalogWith(webhooks)), store, limiter: createMemoryLimiter(), logger: pino({ level: 'silent' }), env });
        await expect(starting).rejects.toThrow('alerts.webhooks[0]: environment variable MISSING_WEBHOOK_SECRET (its signing secret) is not set');
      }
    } finally {
      await store.close();
    }
  });
});
