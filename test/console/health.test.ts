/**
 * The console's Health page in a real browser, over 50,000 logged requests (seeded through the
 * store's batch insert, as the writer does) and a real outage: an upstream double (OpenAI's wire
 * format) answers 500 until the target is out of rotation, then recovers. From the overview's
 * "Targets out of rotation" the operator opens the page per target: three charts (time to first
 * byte, duration, error rate) with a line per target and axes wide enough for their figures, a
 * table whose counts are the API's, and the rotation history with the target out and back.
 * Screenshots at a phone's and a desktop's size go to test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { fixture } from '../../src/providers/openai/__fixtures__/fixtures.js';
import type { RequestLogEntry } from '../../src/store/store.js';
import { browserMissing, eventually, openConsole, screenshots, type OpenConsole } from '../support/browser.js';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';
import { json, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';
import { until } from '../support/webhook-receiver.js';

const missing = browserMissing();
const LOG_ROWS = 50_000;
const BATCH = 2_000;
const TARGET = 'upstream/upstream-model';
/** The seeded targets: their time to first byte grows with their index; `seed/flaky` fails one in four. */
const SEEDED = ['seed/steady', 'seed/slow', 'seed/flaky', 'seed/large'] as const;

interface PageElement {
  querySelector(selector: string): { offsetLeft: number } | null;
  ownerDocument: { createElement(tag: 'canvas'): { getContext(kind: '2d'): { font: string; measureText(text: string): { width: number } } | null } };
}

describe.skipIf(missing !== null)('console health page (50,000 logged requests, a real outage), in Chromium', () => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let tab: OpenConsole;
  let page: Page;
  let problems: string[];
  let viewer: string;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(json(500, fixture('error-500.json')));
    harness = await startHarness({
      catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl }),
      env: { TEST_UPSTREAM_KEY: 'sk-upstream-test' },
      router: { failureThreshold: 2, cooldownMs: 400 },
      requestLog: { writer: { flushDelayMs: 10 } },
    });
    viewer = (await createAdminToken(harness.store, { role: 'viewer', name: 'on call' }, CLI_ACTOR)).secret;
    const now = Date.now();
    for (let first = 0; first < LOG_ROWS; first += BATCH) {
      const rows: RequestLogEntry[] = [];
      for (let index = first; index < first + BATCH; index += 1) {
        const which = index % SEEDED.length;
        const target = SEEDED[which]!;
        const failed = target === 'seed/flaky' && index % 16 === 2;
        rows.push({
          at: new Date(now - 60_000 - (LOG_ROWS - index) * 1_700),
          requestId: `req_seed_${index}`,
          accountId: null,
          keyId: null,
          surface: 'chat-completions',
          model: `model-${which}`,
          target,
          status: failed ? 502 : 200,
          errorCode: failed ? 'upstream_error' : null,
          stream: true,
          latencyMs: 400 + which * 900 + (index % 97) * 20,
          firstByteMs: failed ? null : 80 + which * 150 + (index % 89),
          inputTokens: 10,
          cachedInputTokens: 0,
          cacheWriteInputTokens: 0,
          outputTokens: 5,
          reasoningTokens: 0,
          costNanos: 0n,
          requestBody: null,
          responseBody: null,
        });
      }
      await harness.store.appendRequestLog(rows);
    }
    // A real outage: two failures take the target out; once the upstream answers again it is back.
    const { secret } = await harness.newAccount('10');
    const chat = () => harness.post('/v1/chat/completions', { model: 'relay-model', messages: [{ role: 'user', content: 'hi' }] }, secret);
    for (let index = 0; index < 2; index++) expect((await chat()).status).toBe(503);
    upstream.answer(json(200, fixture('chat-completion.json')));
    await until('the target back in rotation', async () => (await chat()).status === 200);
    await until('the rotation closed', async () => (await harness.store.listTargetRotations({ from: new Date(now - 60_000), to: new Date(Date.now() + 1_000), limit: 10 }))[0]?.upAt != null);
    tab = await openConsole(harness, viewer);
    ({ page, problems } = tab);
  }, 120_000);

  afterAll(async () => {
    await tab?.close();
    await harness?.close();
    await upstream?.close();
  });

  const admin = async (path: string) => (await fetch(`${harness.baseUrl}/admin/v1${path}`, { headers: { authorization: `Bearer ${viewer}` } })).json() as Promise<Record<string, unknown>>;

  it('opens from the overview per target: charts with a line per target, counts as the API gives them, and the outage out and back', async () => {
    await page.getByRole('region', { name: 'Targets out of rotation' }).getByRole('link', { name: /Outages by target/ }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Health');
    expect(page.url()).toMatch(/\/console\/health\?by=target$/);
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Health' }).getAttribute('aria-current')).toBe('page');

    // The legend names the targets, most requests first; every chart is drawn.
    const legend = page.getByRole('list', { name: 'Lines' }).locator('li');
    await eventually(() => legend.count()).toBe(5);
    expect((await legend.allTextContents()).sort()).toEqual([...SEEDED, TARGET].sort());
    for (const name of [/^Time to first byte per hour/, /^Duration per hour/, /^Error rate per hour/]) {
      await eventually(() => page.getByRole('img', { name }).locator('canvas').count()).toBe(1);
    }

    // The table's counts are the API's, and the failing targets show their errors.
    const report = (await admin(`/health/requests?by=target&from=${new Date(Date.now() - 86_400_000).toISOString()}`)) as { groups: Array<{ group: string; requests: number; errors: number; error_rate: number }> };
    const table = page.getByRole('region', { name: 'Requests and errors per target' });
    const cells = async (target: string) => (await table.locator('tr', { has: page.locator(`td[data-label="Target"]`, { hasText: new RegExp(`^${target}$`) }) }).locator('td').allTextContents()).map((text) => text.trim());
    for (const target of ['seed/flaky', TARGET]) {
      const group = report.groups.find((row) => row.group === target)!;
      expect(group.errors).toBeGreaterThan(0);
      const shown = await cells(target);
      expect(shown.slice(0, 4)).toEqual([target, String(group.requests), String(group.errors), `${(group.error_rate * 100).toFixed(1)}%`]);
    }
    expect((await cells('seed/steady')).slice(2, 4)).toEqual(['0', '0%']);

    // Duration axis figures read in full (`4 s`, not cut), the plot starting after the widest one.
    const duration = page.getByRole('img', { name: /^Duration per hour/ });
    await eventually(() => duration.getAttribute('data-axis-labels')).toMatch(/\d/);
    const figures = ((await duration.getAttribute('data-axis-labels')) ?? '').split('|');
    // Durations in milliseconds up to a second, then in seconds; the highest above the slowest seeded p95 (about 4.6 s).
    for (const figure of figures) expect(figure).toMatch(/^\d+(\.\d+)? (ms|s)$/);
    expect(Math.max(...figures.map((figure) => Number.parseFloat(figure) * (figure.endsWith(' ms') ? 1 : 1_000)))).toBeGreaterThanOrEqual(4_000);
    const room = await duration.evaluate((element: PageElement, texts: string[]) => {
      const over = element.querySelector('.u-over');
      const context2d = element.ownerDocument.createElement('canvas').getContext('2d');
      if (over === null || context2d === null) return { left: 0, widest: Number.POSITIVE_INFINITY };
      context2d.font = '12px system-ui, -apple-system, "Segoe UI", sans-serif';
      return { left: over.offsetLeft, widest: Math.max(...texts.map((text) => context2d.measureText(text).width)) };
    }, figures);
    expect(room.left).toBeGreaterThan(room.widest + 4);
    expect(await page.getByRole('img', { name: /^Error rate per hour/ }).getAttribute('data-axis-labels')).toMatch(/%/);

    // The rotation history: the target out, then back, why, and for how long.
    const history = page.getByRole('region', { name: 'Targets out of rotation and back' });
    await eventually(() => history.locator('tbody tr').count()).toBe(1);
    const row = history.locator('tbody tr').first();
    expect(await row.locator('td[data-label="Target"]').textContent()).toBe(TARGET);
    expect(await row.locator('td[data-label="Why"]').textContent()).toBe('Failures in a row (last: status 500)');
    const rotations = (await admin('/health/rotations')) as { data: Array<{ out_at: string; back_at: string; out_ms: number }> };
    expect(await row.locator('td[data-label="Out of rotation"] time').getAttribute('datetime')).toBe(rotations.data[0]!.out_at);
    expect(await row.locator('td[data-label="Back"] time').getAttribute('datetime')).toBe(rotations.data[0]!.back_at);
    expect(rotations.data[0]!.out_ms).toBeGreaterThanOrEqual(400);
    expect(await row.locator('td[data-label="Out for"]').textContent()).toMatch(/^(\d+ ms|\d+ s)$/);
    await screenshots(page, 'health-by-target');
    expect(problems).toEqual([]);
  });

  it('answers the figures over 50,000 rows quickly, and switches to per model and to a longer range', async () => {
    // Warm: the second of two reads.
    await admin('/health/requests?by=model');
    const started = performance.now();
    await admin('/health/requests?by=model');
    const elapsed = performance.now() - started;
    console.info(`health figures over ${LOG_ROWS} rows in ${Math.round(elapsed)} ms`);
    expect(elapsed).toBeLessThan(1_000);

    await page.getByLabel('Per', { exact: true }).selectOption('model');
    await eventually(() => page.url()).toMatch(/by=model/);
    const legend = page.getByRole('list', { name: 'Lines' }).locator('li');
    await eventually(async () => (await legend.allTextContents()).sort()).toEqual(['model-0', 'model-1', 'model-2', 'model-3', 'relay-model']);
    await page.getByLabel('Range', { exact: true }).selectOption('30d');
    await eventually(() => page.getByRole('img', { name: /^Duration per day/ }).locator('canvas').count()).toBe(1);
    await page.getByLabel('Times shown', { exact: true }).selectOption('p50');
    await eventually(() => page.url()).toMatch(/range=30d&by=model&stat=p50$/);
    await eventually(() => page.getByRole('img', { name: /^Time to first byte per day, p50 \(median\)/ }).count()).toBe(1);
    await screenshots(page, 'health-by-model');
    expect(problems).toEqual([]);
  });
});
