/**
 * An outage drill in a real browser, walked in the order an operator lives it, on one gateway
 * (SQLite): a model with one target on an upstream double (OpenAI's wire format) that answers,
 * fails, then answers again; traffic through the official openai SDK; a Slack incoming webhook (a
 * local receiver on a Slack-like path, whose first try of the recovery fails once). The target
 * fails and leaves rotation, the next request is refused without reaching the upstream, and the
 * outage arrives in Slack's shape; the console's overview lists the target out, the Health page
 * draws its errors and lists it still out, the deliveries page lists the delivery. The upstream
 * recovers, traffic succeeds, the recovery arrives after one retry; the Health page shows the
 * target back and the deliveries page the recovery with its two attempts. Screenshots at a phone's
 * and a desktop's size go to test-results/console/.
 */
import OpenAI from 'openai';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { fixture } from '../../src/providers/openai/__fixtures__/fixtures.js';
import { browserMissing, eventually, openConsole, screenshots, type OpenConsole } from '../support/browser.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startSlackOutageAlerts } from '../support/slack-outage-alerts.js';
import { json, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';
import { until, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';

const missing = browserMissing();
const TARGET = 'upstream/upstream-model';
const healthy = json(200, fixture('chat-completion.json'));
const failing = json(500, fixture('error-500.json'));

interface SlackBody {
  text: string;
  blocks: Array<{ type: string; text: { type: string; text: string } }>;
}
const slack = (webhook: ReceivedWebhook) => webhook.body as unknown as SlackBody;

interface HealthGroup {
  group: string;
  requests: number;
  errors: number;
  error_rate: number;
}
interface Rotation {
  target: string;
  out_at: string;
  back_at: string | null;
  out_ms: number | null;
}

/** What the page's script sees of an element (the tests compile without the DOM's types). */
interface StyledElement {
  ownerDocument: { defaultView: { getComputedStyle(element: unknown): { backgroundColor: string } } | null };
}
interface CanvasElement {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, width: number, height: number): { data: ArrayLike<number> } } | null;
}

/** How many pixels of `chart`'s canvas are drawn in the colour of `swatch` (a legend entry's): the line or points of that group. */
async function pixelsInColourOf(chart: Locator, swatch: Locator): Promise<number> {
  const colour = await swatch.evaluate((element: StyledElement) => element.ownerDocument.defaultView?.getComputedStyle(element).backgroundColor ?? '');
  const rgb = (colour.match(/\d+/g) ?? []).slice(0, 3).map(Number);
  expect(rgb).toHaveLength(3);
  return chart.locator('canvas').evaluate((canvas: CanvasElement, [red, green, blue]: number[]) => {
    const data = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
    let count = 0;
    for (let index = 0; index < data.length; index += 4) {
      const near = Math.abs(data[index]! - red!) <= 24 && Math.abs(data[index + 1]! - green!) <= 24 && Math.abs(data[index + 2]! - blue!) <= 24;
      if (near && data[index + 3]! >= 200) count += 1;
    }
    return count;
  }, rgb);
}

describe.skipIf(missing !== null)('an outage drill, from the failure to the recovery, in Chromium', () => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let receiver: WebhookReceiver;
  let tab: OpenConsole;
  let page: Page;
  let client: OpenAI;
  let operator: string;
  /** Requests sent through the SDK, each one request-log row. */
  let sent = 0;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(healthy);
    // The first try of the recovery (the receiver's second request) fails once: a retry to list.
    const alerts = await startSlackOutageAlerts(upstream.baseUrl);
    receiver = alerts.receiver;
    harness = await startHarness({
      catalog: alerts.catalog,
      env: { TEST_UPSTREAM_KEY: 'sk-upstream-test' },
      // Two failures take the target out; it is skipped for two seconds (time for a refused request), then tried again.
      router: { failureThreshold: 2, cooldownMs: 2_000 },
      requestLog: { writer: { flushDelayMs: 10 } },
    });
    operator = (await createAdminToken(harness.store, { role: 'operator', name: 'on call' }, CLI_ACTOR)).secret;
    client = harness.client((await harness.newAccount('10')).secret);
    tab = await openConsole(harness, operator);
    ({ page } = tab);
  });

  afterAll(async () => {
    await tab?.close();
    await harness?.close();
    await Promise.all([upstream?.close(), receiver?.close()]);
  });

  const ask = () => {
    sent += 1;
    return client.chat.completions.create({ model: 'relay-model', messages: [{ role: 'user', content: 'hi' }] });
  };
  /** The SDK's error for a request the gateway does not serve. */
  const refused = async () => {
    const error = await ask().then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    return error as InstanceType<typeof OpenAI.APIError>;
  };
  const admin = async <T,>(path: string) => {
    const response = await fetch(`${harness.baseUrl}/admin/v1${path}`, { headers: { authorization: `Bearer ${operator}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  };
  const dayAgo = () => new Date(Date.now() - 86_400_000).toISOString();
  /**
   * The API's figures per target or model, once the request log holds every request sent (counted
   * per model: per target, a request refused before any target was tried is in no group).
   */
  const loggedGroups = async (by: 'target' | 'model') => {
    const groups = (grouping: string) => admin<{ groups: HealthGroup[] }>(`/health/requests?by=${grouping}&from=${dayAgo()}`);
    await until('every request in the request log', async () => (await groups('model')).groups.reduce((total, group) => total + group.requests, 0) === sent);
    return (await groups(by)).groups;
  };
  const heading = () => page.getByRole('heading', { level: 1 }).textContent();
  const outOfRotation = () => page.getByRole('region', { name: 'Targets out of rotation', exact: true }).first();
  /** The Health page's table row of one target or model. */
  const groupRow = (by: 'target' | 'model', group: string) =>
    page.getByRole('region', { name: `Requests and errors per ${by}` }).locator('tr', { has: page.locator(`td[data-label="${by === 'target' ? 'Target' : 'Model'}"]`, { hasText: new RegExp(`^${group}$`) }) });
  const cellsOf = async (row: Locator) => (await row.locator('td').allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim());
  const rotationRows = () => page.getByRole('region', { name: 'Targets out of rotation and back' }).locator('tbody tr');
  const deliveryRows = () => page.getByRole('region', { name: 'Deliveries' }).locator('tbody tr');

  /** The Health page per target: the target drawn in the error-rate chart, and its table row as the API counts it. */
  async function checkHealthPage(): Promise<HealthGroup> {
    await eventually(heading).toBe('Health');
    expect(page.url()).toMatch(/\/console\/health\?by=target$/);
    const groups = await loggedGroups('target');
    const target = groups.find((group) => group.group === TARGET)!;
    expect(target.errors).toBeGreaterThan(0);
    const legend = page.getByRole('list', { name: 'Lines' }).locator('li');
    await eventually(() => legend.allTextContents()).toEqual(groups.map((group) => group.group));
    for (const name of [/^Time to first byte per hour/, /^Duration per hour/, /^Error rate per hour/]) {
      await eventually(() => page.getByRole('img', { name }).locator('canvas').count()).toBe(1);
    }
    const swatch = legend.filter({ hasText: new RegExp(`^${TARGET}$`) }).locator('.swatch');
    await eventually(() => pixelsInColourOf(page.getByRole('img', { name: /^Error rate per hour/ }), swatch)).toBeGreaterThan(0);
    await eventually(async () => (await cellsOf(groupRow('target', TARGET))).slice(0, 4)).toEqual([TARGET, String(target.requests), String(target.errors), `${(target.error_rate * 100).toFixed(1)}%`]);
    return target;
  }

  it('serves through the SDK while the upstream answers', async () => {
    const answer = await ask();
    expect(answer.choices[0]!.message.content).toBe('Oslo is snowy; Rome is sunny.');
    expect(upstream.requests).toHaveLength(1);
  });

  it('the target fails: requests fail, then are refused without reaching it, and Slack hears of the outage', async () => {
    upstream.answer(failing);
    for (let index = 0; index < 2; index++) expect((await refused()).status).toBe(503);
    expect(upstream.requests).toHaveLength(3);
    // Out of rotation: refused at once, the upstream not called.
    expect((await refused()).status).toBe(503);
    expect(upstream.requests).toHaveLength(3);

    await until('the outage in Slack', () => receiver.accepted().length === 1);
    const down = receiver.accepted()[0]!;
    expect(down.headers['content-type']).toBe('application/json');
    expect(Object.keys(down.body).sort()).toEqual(['blocks', 'text']);
    expect(slack(down).blocks.map((block) => [block.type, block.text.type])).toEqual([['header', 'plain_text'], ['section', 'plain_text']]);
    expect(slack(down).blocks[0]!.text.text).toBe(`Tollgate: target ${TARGET} is out of rotation`);
    expect(slack(down).text).toContain('Failure: status (HTTP 500)');
    expect(slack(down).text).toMatch(/When: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
  });

  it('the console shows the outage: the target out on the overview, its errors and "Still out" on the Health page, the delivery listed', async () => {
    await page.reload();
    await eventually(heading).toBe('Overview');
    await eventually(async () => (await cellsOf(outOfRotation().locator('tbody tr'))).slice(0, 3)).toEqual([TARGET, expect.stringMatching(/^(◌ Cooling down|◐ Recovering)$/), 'Failures in a row']);
    await outOfRotation().getByRole('link', { name: /Outages by target/ }).click();
    // The target saw the answer and the two failures; the refused request never reached it.
    expect(await checkHealthPage()).toMatchObject({ requests: 3, errors: 2 });
    await eventually(() => rotationRows().count()).toBe(1);
    const rotation = await cellsOf(rotationRows().first());
    expect([rotation[0], ...rotation.slice(2, 5)]).toEqual([TARGET, 'Still out', '—', 'Failures in a row (last: status 500)']);
    const rotations = await admin<{ data: Rotation[] }>(`/health/rotations?from=${dayAgo()}`);
    expect(rotations.data).toMatchObject([{ target: TARGET, back_at: null, out_ms: null }]);
    expect(await rotationRows().first().locator('td[data-label="Out of rotation"] time').getAttribute('datetime')).toBe(rotations.data[0]!.out_at);
    await screenshots(page, 'outage-drill-health-out');

    // Per model, the refused request counts too.
    await page.getByLabel('Per', { exact: true }).selectOption('model');
    expect(await loggedGroups('model')).toMatchObject([{ group: 'relay-model', requests: 4, errors: 3 }]);
    await eventually(async () => (await cellsOf(groupRow('model', 'relay-model'))).slice(0, 4)).toEqual(['relay-model', '4', '3', '75.0%']);

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Alerts' }).click();
    await eventually(heading).toBe('Alert deliveries');
    await eventually(() => deliveryRows().count()).toBe(1);
    expect((await cellsOf(deliveryRows().first())).slice(1, 6)).toEqual(['target.down', `Slack · ${new URL(receiver.url).host}`, '● Delivered', '2xx', '1']);
    expect(tab.problems).toEqual([]);
  });

  it('the upstream recovers: traffic succeeds and Slack hears of the recovery, after one retry', async () => {
    upstream.answer(healthy);
    await until('traffic served again', async () => {
      try {
        return (await ask()).choices[0]!.message.content === 'Oslo is snowy; Rome is sunny.';
      } catch (error) {
        if (error instanceof OpenAI.APIError && error.status === 503) return false;
        throw error;
      }
    });
    await until('the recovery in Slack', () => receiver.accepted().length === 2);
    const up = receiver.accepted()[1]!;
    expect(Object.keys(up.body).sort()).toEqual(['blocks', 'text']);
    expect(slack(up).blocks[0]!.text.text).toBe(`Tollgate: target ${TARGET} is back in rotation`);
    expect(receiver.received.map((each) => each.status)).toEqual([200, 503, 200]);
  });

  it('the console shows the recovery: every target in rotation, the target back on the Health page, the recovery delivery with its retry', async () => {
    await until('the rotation closed', async () => (await admin<{ data: Rotation[] }>(`/health/rotations?from=${dayAgo()}`)).data[0]?.back_at != null);
    await until('the recovery delivered', async () => (await harness.store.listAlertDeliveries({ state: 'delivered' }, { limit: 10 })).rows.length === 2);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Overview' }).click();
    await eventually(heading).toBe('Overview');
    await eventually(() => outOfRotation().locator('p').last().textContent()).toMatch(/^Every target is in rotation/);
    await outOfRotation().getByRole('link', { name: /Outages by target/ }).click();
    await checkHealthPage();
    const rotations = await admin<{ data: Rotation[] }>(`/health/rotations?from=${dayAgo()}`);
    expect(rotations.data).toHaveLength(1);
    await eventually(() => rotationRows().first().locator('td[data-label="Back"] time').getAttribute('datetime')).toBe(rotations.data[0]!.back_at);
    expect(rotations.data[0]!.out_ms).toBeGreaterThanOrEqual(2_000);
    expect(await rotationRows().first().locator('td[data-label="Out for"]').textContent()).toMatch(/^\d+ s$/);
    await screenshots(page, 'outage-drill-health-back');

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Alerts' }).click();
    await eventually(heading).toBe('Alert deliveries');
    await eventually(() => deliveryRows().count()).toBe(2);
    const host = new URL(receiver.url).host;
    expect((await cellsOf(deliveryRows().nth(0))).slice(1, 6)).toEqual(['target.up', `Slack · ${host}`, '● Delivered', '2xx', '2']);
    expect((await cellsOf(deliveryRows().nth(1))).slice(1, 6)).toEqual(['target.down', `Slack · ${host}`, '● Delivered', '2xx', '1']);
    await screenshots(page, 'outage-drill-deliveries');
    expect(tab.problems).toEqual([]);
  });
});
