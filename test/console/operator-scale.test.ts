/**
 * The console at an operator's scale, in a real browser: 500 accounts, each with a key that made a
 * real request through the gateway, and 50,000 request-log rows written by the store's batch insert
 * (the one the request-log writer uses). Each test would have caught one of issue 21's console
 * defects: the overview's by-account table (raw ids, "Keys not found", a page grown to 22,000 px),
 * clipped chart axes, request ids that look alike, the ledger and audit log oldest first with no
 * time range, and a credit form that turns red after a successful credit. One gateway and one
 * browser for the file; screenshots of each page go to test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { browserMissing, eventually, openConsole, screenshots, type OpenConsole } from '../support/browser.js';
import { startHarness, type Harness } from '../support/harness.js';
import { seedOperatorScale } from '../support/operator-scale-seed.js';

const missing = browserMissing();

/** What the tests read of an element in the page (the suites compile without the DOM's types). */
interface PageElement {
  innerText: string;
  offsetLeft: number;
  scrollWidth: number;
  clientWidth: number;
  getBoundingClientRect(): { left: number; right: number };
  querySelector(selector: string): PageElement | null;
  closest(selector: string): PageElement | null;
  ownerDocument: { createElement(tag: 'canvas'): { getContext(kind: '2d'): { font: string; measureText(text: string): { width: number } } | null } };
}

const ACCOUNTS = 500;
const LOG_ROWS = 50_000;

describe.skipIf(missing !== null)('console at scale (500 accounts, 50,000 logged requests), in Chromium', () => {
  let harness: Harness;
  let tab: OpenConsole;
  let page: Page;
  let problems: string[];
  let ownerToken: string;
  const accountIds: string[] = [];

  beforeAll(async () => {
    harness = await startHarness();
    ownerToken = (await createAdminToken(harness.store, { role: 'owner', name: 'ops lead' }, CLI_ACTOR)).secret;
    const started = Date.now();
    // One real request per account, longer for the later accounts (they spend the most): charges in
    // the ledger for every account, and over 600,000 tokens in a day for the chart's axis; then the
    // log rows through the writer's batch insert, a third of them errors.
    const seeded = await seedOperatorScale(harness, { accounts: ACCOUNTS, logRows: LOG_ROWS });
    accountIds.push(...seeded.accountIds);
    console.info(`seeded ${ACCOUNTS} accounts, their requests and ${LOG_ROWS} log rows in ${Date.now() - started} ms`);
    tab = await openConsole(harness, ownerToken);
    ({ page, problems } = tab);
  }, 120_000);

  afterAll(async () => {
    await tab?.close();
    await harness?.close();
  });

  const admin = (path: string) => fetch(`${harness.baseUrl}/admin/v1${path}`, { headers: { authorization: `Bearer ${ownerToken}` } });

  it("sums usage by account on the server: the top ten by name, the other 490 in one row, the page's height bounded", async () => {
    const table = page.getByRole('region', { name: 'Account totals' });
    await eventually(() => table.locator('tbody tr').count()).toBe(11);
    const names = await table.locator('tbody tr td:first-child').allTextContents();
    // Highest spend first: the later accounts sent the longest requests.
    expect(names.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, index) => `customer-${499 - index}`));
    expect(names[10]).toBe('490 other accounts');
    expect((await table.textContent()) ?? '').not.toMatch(/acct_|Keys not found/);
    // The others row holds every charge the top ten do not: the table's spend adds up to the total.
    const answer = (await (await admin('/usage/accounts?top=10')).json()) as { top: unknown[]; other_accounts: number; others: { requests: number }; total: { requests: number } };
    expect(answer.top).toHaveLength(10);
    expect(answer.other_accounts).toBe(490);
    expect(answer.others.requests + 10).toBe(answer.total.requests);
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(await page.evaluate<number>('document.documentElement.scrollHeight')).toBeLessThan(3_000);
    await screenshots(page, 'scale-overview');
  });

  it('gives the chart axes room for their longest figure: 600,000 tokens reads in full', async () => {
    const chart = page.getByRole('img', { name: /tokens \(in \+ out\) per/ });
    await eventually(() => chart.getAttribute('data-axis-labels')).toMatch(/\d/);
    const labels = ((await chart.getAttribute('data-axis-labels')) ?? '').split(' ');
    // Whole compact figures (`600K`, `1M`), the highest above the day's 600,000 tokens, not cut to their last digits.
    for (const label of labels) expect(label).toMatch(/^\d+(\.\d+)?[KM]?$/);
    const value = (label: string): number => Number.parseFloat(label) * (label.endsWith('M') ? 1e6 : label.endsWith('K') ? 1e3 : 1);
    expect(Math.max(...labels.map(value))).toBeGreaterThanOrEqual(600_000);
    // The plot starts after the axis: the widest figure, measured in the page's own font, fits before it.
    const room = await chart.evaluate((element: PageElement, figures: string[]) => {
      const over = element.querySelector('.u-over');
      const context2d = element.ownerDocument.createElement('canvas').getContext('2d');
      if (over === null || context2d === null) return { left: 0, widest: Number.POSITIVE_INFINITY };
      context2d.font = '12px system-ui, -apple-system, "Segoe UI", sans-serif';
      return { left: over.offsetLeft, widest: Math.max(...figures.map((figure) => context2d.measureText(figure).width)) };
    }, labels);
    expect(room.left).toBeGreaterThan(room.widest + 4);
    // Money too: the spend axis has figures, in dollars.
    const spend = page.getByRole('img', { name: /spend per/ });
    expect(await spend.getAttribute('data-axis-labels')).toMatch(/^\$/);
  });

  it('shows whole request ids in the log, so two of one process differ in what is visible', async () => {
    const started = Date.now();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Requests' }).click();
    const cells = page.getByRole('region', { name: 'Request list' }).locator('tbody td[data-label="Request id"]');
    await eventually(() => cells.count()).toBe(50);
    console.info(`request log with ${LOG_ROWS} rows shown in ${Date.now() - started} ms`);
    const [first, second] = await cells.evaluateAll((elements: PageElement[]) =>
      elements.slice(0, 2).map((cell) => {
        // Within its cell and within the table's frame (which scrolls a table too wide for it, hiding the rest).
        const frame = cell.closest('.table-wrap')?.getBoundingClientRect();
        const id = cell.querySelector('code')?.getBoundingClientRect();
        const inFrame = frame !== undefined && id !== undefined && id.right <= frame.right && id.left >= frame.left;
        return { text: cell.innerText, fits: cell.scrollWidth <= cell.clientWidth && inFrame };
      }),
    );
    expect(first?.text).toMatch(/^req_[0-9a-f]{24}$/);
    expect(second?.text).toMatch(/^req_[0-9a-f]{24}$/);
    expect(first?.text).not.toBe(second?.text);
    expect([first?.fits, second?.fits]).toEqual([true, true]);
    await screenshots(page, 'scale-requests');
  });

  it('lists the ledger newest first with a time range, and a successful credit is shown as one (no red fields)', async () => {
    await page.goto(`/console/accounts/${accountIds[7] ?? ''}`);
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('customer-007');
    await page.getByLabel('Amount (USD)').fill('2.5');
    await page.getByLabel('Reason').fill('goodwill');
    await page.getByRole('button', { name: 'Add credit' }).click();
    await eventually(() => page.getByRole('status').filter({ hasText: 'Done:' }).textContent()).toBe('Done: Credited $2.50 (goodwill).');
    expect(await page.getByRole('alert').count()).toBe(0);
    const invalid = await page.locator('#adjust-amount, #adjust-reason').evaluateAll((inputs) => inputs.map((input) => input.matches(':user-invalid')));
    expect(invalid).toEqual([false, false]);
    const ledger = page.getByRole('region', { name: 'Ledger' }).locator('tbody tr');
    await eventually(() => ledger.locator('td[data-label="Note"]').first().textContent()).toBe('goodwill');
    const kinds = await ledger.locator('td[data-label="Kind"]').allTextContents();
    // The credit just made, the request's charge, the opening balance: newest first.
    expect(kinds).toEqual(['Credit', 'Charge', 'Credit']);
    const times = await ledger.locator('time').evaluateAll((elements) => elements.map((element) => Date.parse(element.getAttribute('datetime') ?? '')));
    expect([...times].sort((left, right) => right - left)).toEqual(times);
    await screenshots(page, 'scale-account');
    // A range that ends before today holds none of them.
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel('Before (UTC day)').fill(today);
    await page.getByRole('search', { name: 'ledger time range' }).getByRole('button', { name: 'Filter' }).click();
    await eventually(() => page.getByRole('region', { name: 'Ledger' }).textContent()).toContain('No entries in this range.');
    // The API refuses a range that ends before it starts.
    const backwards = await admin(`/accounts/${accountIds[7] ?? ''}/ledger?from=2026-02-02&to=2026-02-01`);
    expect(backwards.status).toBe(400);
  });

  it('lists the audit log newest first, with a time range', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Audit log');
    const actions = page.locator('table tbody td[data-label="Action"]');
    await eventually(() => actions.first().textContent()).toBe('account.credit');
    const ids = ((await (await admin('/audit?limit=100')).json()) as { data: Array<{ id: number }> }).data.map((entry) => entry.id);
    expect(ids.length).toBe(100);
    expect([...ids].sort((left, right) => right - left)).toEqual(ids);
    await screenshots(page, 'scale-audit');
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('From (UTC day)').fill(tomorrow);
    await page.getByRole('button', { name: 'Filter' }).click();
    await eventually(() => page.getByText('No changes recorded for this filter.').count()).toBe(1);
    expect(new URL(page.url()).search).toBe(`?from=${tomorrow}`);
    const none = (await (await admin(`/audit?from=${tomorrow}`)).json()) as { data: unknown[] };
    expect(none.data).toEqual([]);
  });

  it('ran with no script error and no Content-Security-Policy violation', () => {
    expect(problems).toEqual([]);
  });
});
