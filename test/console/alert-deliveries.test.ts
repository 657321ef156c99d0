/**
 * The console's alert deliveries page in a real browser: a real outage (an upstream double that
 * answers 500) sends `target.down` to a Slack webhook (a local receiver, delivered) and to a
 * generic one that always answers 500 (retried, then given up); the page lists both newest first
 * with their destination, state, HTTP status and attempts; an operator's "Resend" queues the Slack
 * one again, which arrives and is listed; a viewer is not offered the button. Screenshots at a
 * phone's and a desktop's size go to test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { fixture } from '../../src/providers/openai/__fixtures__/fixtures.js';
import { browserMissing, eventually, openConsole, screenshots, signInToConsole, type OpenConsole } from '../support/browser.js';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';
import { json, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';
import { startWebhookReceiver, until, type WebhookReceiver } from '../support/webhook-receiver.js';

const missing = browserMissing();

describe.skipIf(missing !== null)('console alert deliveries, in Chromium', () => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let slackReceiver: WebhookReceiver;
  let failingReceiver: WebhookReceiver;
  let tab: OpenConsole;
  let page: Page;
  let problems: string[];
  let operator: string;
  let viewer: string;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(json(500, fixture('error-500.json')));
    slackReceiver = await startWebhookReceiver({ path: '/services/T000/B000/XXXX' });
    failingReceiver = await startWebhookReceiver({ status: () => 500 });
    const catalog = {
      ...(testCatalog({ upstreamBaseUrl: upstream.baseUrl }) as Record<string, unknown>),
      alerts: {
        webhooks: [
          { url: slackReceiver.url, format: 'slack', events: ['target.down', 'target.up'] },
          { url: failingReceiver.url, secret_env: 'OPS_SECRET', events: ['target.down'] },
        ],
        delivery: { poll_ms: 25, first_retry_ms: 50, max_retry_ms: 100, max_age_seconds: 1 },
      },
    };
    harness = await startHarness({ catalog, env: { TEST_UPSTREAM_KEY: 'sk-upstream-test', OPS_SECRET: 'whsec-ops' }, router: { failureThreshold: 2, cooldownMs: 60_000 } });
    operator = (await createAdminToken(harness.store, { role: 'operator', name: 'on call' }, CLI_ACTOR)).secret;
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    const { secret } = await harness.newAccount('10');
    for (let index = 0; index < 2; index++) {
      await harness.post('/v1/chat/completions', { model: 'relay-model', messages: [{ role: 'user', content: 'hi' }] }, secret);
    }
    await until('the Slack delivery', () => slackReceiver.accepted().length === 1);
    await until('the generic delivery given up', async () => (await harness.store.listAlertDeliveries({ state: 'abandoned' }, { limit: 10 })).rows.length === 1, 10_000);
    tab = await openConsole(harness, operator);
    ({ page, problems } = tab);
  });

  afterAll(async () => {
    await tab?.close();
    await harness?.close();
    await Promise.all([upstream?.close(), slackReceiver?.close(), failingReceiver?.close()]);
  });

  it('lists each delivery with destination, state, HTTP status and attempts, and resends one', async () => {
    await page.getByRole('link', { name: 'Alerts' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Alert deliveries');
    const rows = page.getByRole('region', { name: 'Deliveries' }).locator('tbody tr');
    await eventually(() => rows.count()).toBe(2);
    const cells = async (index: number) => (await rows.nth(index).locator('td').allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim());
    const generic = await cells(0);
    const slackRow = await cells(1);
    expect(generic.slice(1, 6)).toEqual([
      'target.down',
      `Webhook · ${new URL(failingReceiver.url).host}`,
      expect.stringMatching(/^× Given up: answered HTTP 500/),
      '500',
      expect.stringMatching(/^([2-9]|\d\d+)$/),
    ]);
    expect(slackRow.slice(1, 6)).toEqual(['target.down', `Slack · ${new URL(slackReceiver.url).host}`, '● Delivered', '2xx', '1']);
    await screenshots(page, 'alert-deliveries');

    await rows.nth(1).getByRole('button', { name: /^Resend target\.down delivery \d+$/ }).click();
    await eventually(() => page.getByRole('status').first().textContent()).toMatch(/^Done: Queued again as delivery \d+ \(event evt_[0-9a-f]{32}\)\.$/);
    await until('the resend in Slack', () => slackReceiver.accepted().length === 2);
    expect(slackReceiver.accepted()[1]!.rawBody).toBe(slackReceiver.accepted()[0]!.rawBody);
    await eventually(() => rows.count()).toBe(3);
    await eventually(async () => (await cells(0)).slice(1, 2)).toEqual([expect.stringMatching(/^target\.down ?resend of evt_[0-9a-f]{4}…$/)]);
    const original = await rows.nth(2).getByRole('button').getAttribute('aria-label');
    expect(original).toMatch(/^Resend target\.down delivery \d+$/);
    await page.reload();
    await eventually(async () => (await cells(0))[3]).toBe('● Delivered');
    await screenshots(page, 'alert-deliveries-resent');

    await page.getByLabel('State').selectOption('abandoned');
    await eventually(() => rows.count()).toBe(1);
    expect(page.url()).toMatch(/\/console\/alerts\?state=abandoned$/);
    expect(problems).toEqual([]);
  });

  it('offers a viewer no Resend button', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signInToConsole(page, viewer);
    await page.goto('/console/alerts');
    const rows = page.getByRole('region', { name: 'Deliveries' }).locator('tbody tr');
    await eventually(() => rows.count()).toBe(3);
    expect(await page.getByRole('button', { name: /^Resend/ }).count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
