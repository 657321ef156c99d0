/**
 * The console in a real browser, the flow issue 11 lists: an owner signs in, creates an account,
 * credits it, creates a key (its secret shown once, copied with the copy button), makes a real
 * request with it through the gateway, finds the request in the request log (with its detail and
 * the CSV export), sees the spend on the overview's chart, rotates the key, disables it (the next
 * request is refused with 401) and deletes it. Also the operators' models page and the account's
 * low-balance alert. Screenshots of each page at two sizes go to test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { join } from 'node:path';
import { browserMissing, eventually, SCREENSHOT_FOLDER, screenshots, statValue as stat, openConsole, type OpenConsole } from '../support/browser.js';
import { startHarness, type Harness } from '../support/harness.js';

const missing = browserMissing();

describe.skipIf(missing !== null)('console keys, request log and charts, in Chromium', () => {
  let harness: Harness;
  let tab: OpenConsole;
  let page: Page;
  let problems: string[];
  let ownerToken: string;
  let secret = '';
  let requestId = '';
  let costUsd = '';

  const heading = () => page.getByRole('heading', { level: 1 }).textContent();
  const chat = (key: string) => harness.post('/v1/chat/completions', { model: 'model-5.6', messages: [{ role: 'user', content: 'Hello there.' }] }, key);

  beforeAll(async () => {
    harness = await startHarness();
    ownerToken = (await createAdminToken(harness.store, { role: 'owner', name: 'ops lead' }, CLI_ACTOR)).secret;
    tab = await openConsole(harness);
    ({ page, problems } = tab);
  });

  afterAll(async () => {
    await tab?.close();
    await harness?.close();
  });

  it('signs in as owner, creates an account and credits it', async () => {
    await page.goto('/console/accounts');
    await page.getByLabel('Admin token or API key').fill(ownerToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await eventually(heading).toBe('Accounts');
    await page.getByLabel('Name', { exact: true }).fill('globex');
    await page.getByRole('button', { name: 'Create account' }).click();
    await eventually(heading).toBe('globex');
    await page.getByLabel('Amount (USD)').fill('5');
    await page.getByLabel('Reason', { exact: true }).fill('first top-up');
    await page.getByRole('button', { name: 'Add credit' }).click();
    await eventually(() => stat(page, 'Balance')).toBe('$5.00');
  });

  it('creates a key: the secret is shown once with a curl line and an SDK snippet, and copied', async () => {
    await page.getByLabel('Key name').first().fill('ci-bot');
    await page.getByLabel('Models (empty: every model)').fill('model-5.6, model-5.6-mini');
    await page.getByLabel('Budget (USD, empty: none)').fill('2.5');
    await page.getByLabel('Budget period').selectOption('day');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.locator('.card-highlight pre code');
    await eventually(() => shown.first().textContent()).toMatch(/^sk-tg-\S+$/);
    secret = (await shown.first().textContent()) ?? '';
    expect(await shown.nth(1).textContent()).toContain(`curl ${harness.baseUrl}/v1/chat/completions`);
    expect(await shown.nth(1).textContent()).toContain(`Bearer ${secret}`);
    expect(await shown.nth(2).textContent()).toContain(`OpenAI(base_url="${harness.baseUrl}/v1", api_key="${secret}")`);
    await page.getByRole('button', { name: 'Copy the new key' }).click();
    await eventually(() => page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
    const keyRows = page.getByRole('region', { name: 'Key list' }).locator('tbody tr');
    await eventually(() => keyRows.count()).toBe(1);
    expect(await keyRows.first().locator('td').nth(4).textContent()).toBe('$2.50 / day');
    await screenshots(page, 'account-keys');
  });

  it('makes a real request with the copied key through the gateway', async () => {
    const copied = await page.evaluate<string>('navigator.clipboard.readText()');
    const response = await chat(copied);
    expect(response.status).toBe(200);
    requestId = response.headers.get('x-request-id') ?? '';
    expect(requestId).not.toBe('');
    await response.text();
  });

  it('finds the request in the request log, with its detail and the CSV export', async () => {
    const rows = page.getByRole('region', { name: 'Request list' }).locator('tbody tr');
    // The log is written in batches shortly after the request: read the page again until it is there.
    await eventually(async () => {
      await page.goto('/console/requests?model=model-5.6');
      await eventually(heading).toBe('Request log');
      await page.getByText(/No requests match|model-5\.6/).first().waitFor();
      return rows.count();
    }).toBe(1);
    expect(await page.getByLabel('Model').inputValue()).toBe('model-5.6');
    expect(await rows.first().locator('td[data-label="Status"]').textContent()).toBe('200');
    costUsd = (await rows.first().locator('td[data-label="Cost"]').locator('.amount').getAttribute('title'))?.replace(/ USD$/, '') ?? '';
    expect(costUsd).toMatch(/^0\.\d+$/);
    await screenshots(page, 'requests');

    // The filters stay in the address: another model finds nothing.
    await page.getByLabel('Model').fill('model-5.6-mini');
    await page.getByRole('button', { name: 'Filter' }).click();
    await eventually(() => page.getByText('No requests match.').count()).toBe(1);
    expect(new URL(page.url()).search).toBe('?model=model-5.6-mini');
    await page.goBack();
    await eventually(() => rows.count()).toBe(1);

    // The CSV export, downloaded the way the link is, with the session cookie.
    const href = (await page.getByRole('link', { name: 'Export these requests as CSV' }).getAttribute('href')) ?? '';
    expect(href).toBe('/admin/v1/requests?model=model-5.6&format=csv');
    const csv = await page.evaluate<{ status: number; text: string }, string>(async (address) => {
      const answer = await fetch(address);
      return { status: answer.status, text: await answer.text() };
    }, href);
    expect(csv.status).toBe(200);
    expect(csv.text.split('\n')[0]).toMatch(/^at,request_id,account_id,account_name,key_id,key_name,/);
    expect(csv.text).toContain(requestId);

    await rows.first().getByRole('link', { name: requestId }).click();
    await eventually(heading).toBe('Request');
    const detail = page.locator('dl.details');
    await eventually(() => detail.locator('dd').first().textContent()).toBe(requestId);
    expect(await detail.textContent()).toContain('chat-completions');
    await screenshots(page, 'request-detail');
  });

  it('shows the spend on the overview chart, exact, with the by-model and by-account tables', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    await eventually(heading).toBe('Overview');
    const spend = page.locator('figure.chart-card').filter({ hasText: 'Spend' });
    await eventually(() => spend.locator('.chart-total').textContent()).toBe(`$${costUsd}`);
    expect(await page.locator('figure.chart-card').filter({ hasText: 'Requests' }).locator('.chart-total').textContent()).toBe('1');
    expect(await spend.locator('canvas').count()).toBeGreaterThan(0);
    const byModel = page.getByRole('region', { name: 'Model totals' }).locator('tbody tr');
    await eventually(() => byModel.locator('td').allTextContents()).toEqual(['model-5.6', `$${costUsd}`, '1', '0', expect.stringMatching(/^\d+$/)]);
    const byAccount = page.getByRole('region', { name: 'Account totals' }).locator('tbody tr');
    await eventually(() => byAccount.locator('td').first().textContent()).toBe('globex');
    await page.getByLabel('Hour').check();
    await eventually(() => spend.locator('.chart-total').textContent()).toBe(`$${costUsd}`);
    await eventually(() => page.getByText('Every target is in rotation').count()).toBe(1);
    await screenshots(page, 'overview-usage');
    // The README's picture (docs/images/console-overview.png is copied from it): the desktop screen, not the whole page.
    await page.screenshot({ path: join(SCREENSHOT_FOLDER, 'overview-readme.png'), animations: 'disabled' });
  });

  it("shows the account's usage chart, and sets and removes its low-balance alert", async () => {
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('link', { name: 'globex' }).click();
    await eventually(heading).toBe('globex');
    await eventually(() => page.locator('figure.chart-card').filter({ hasText: 'Spend' }).locator('.chart-total').textContent()).toBe(`$${costUsd}`);
    await page.getByLabel('Alert below (USD)').fill('1.000000001');
    await page.getByRole('button', { name: 'Set alert' }).click();
    await eventually(() => page.getByRole('status').filter({ hasText: 'Done:' }).textContent()).toBe('Done: Low-balance alert below $1.000000001.');
    const account = await harness.store.findAccount('globex');
    expect(account?.lowBalanceThresholdNanos).toBe(1_000_000_001n);
    await page.getByRole('button', { name: 'Remove alert' }).click();
    await eventually(() => page.getByRole('status').filter({ hasText: 'Done:' }).textContent()).toBe('Done: Low-balance alert removed.');
  });

  it("opens the key's page: budget spent, limits changed, rotated (the old secret refused)", async () => {
    await page.getByRole('region', { name: 'Key list' }).getByRole('link', { name: 'ci-bot' }).click();
    await eventually(heading).toBe('Key ci-bot');
    await eventually(() => stat(page, 'Spent this period')).toBe(`$${costUsd}`);
    await page.getByLabel('Tokens per minute').fill('50000');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await eventually(() => page.locator('dl.details').innerText()).toContain('50000');
    await screenshots(page, 'key');

    await page.getByRole('button', { name: 'Rotate…' }).click();
    await page.getByRole('button', { name: 'Yes, give ci-bot a new secret' }).click();
    const shown = page.locator('.card-highlight pre code').first();
    await eventually(() => shown.textContent()).toMatch(/^sk-tg-\S+$/);
    const rotated = (await shown.textContent()) ?? '';
    expect(rotated).not.toBe(secret);
    await eventually(async () => (await chat(secret)).status).toBe(401);
    const fresh = await chat(rotated);
    expect(fresh.status).toBe(200);
    await fresh.text();
    secret = rotated;
  });

  it('disables the key: the next request is refused with 401; enabled again, then deleted after a second press', async () => {
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('button', { name: 'Disable key' }).click();
    await eventually(() => page.locator('.page-heading .status').textContent()).toBe('○ Disabled');
    await eventually(async () => (await chat(secret)).status).toBe(401);
    await page.getByRole('button', { name: 'Enable key' }).click();
    await eventually(() => page.locator('.page-heading .status').textContent()).toBe('● Active');

    await page.getByRole('button', { name: 'Delete…' }).click();
    await page.getByRole('button', { name: 'Yes, delete ci-bot' }).click();
    await eventually(heading).toBe('globex');
    await eventually(() => page.getByText('No keys yet.').count()).toBe(1);
    await eventually(async () => (await chat(secret)).status).toBe(401);
  });

  it("lists the catalog for operators: prices, efforts, targets and their health", async () => {
    await page.getByRole('link', { name: 'Models' }).click();
    await eventually(heading).toBe('Models');
    const row = page.getByRole('region', { name: 'Models' }).locator('tbody tr').filter({ hasText: 'failover-model' });
    await eventually(() => row.count()).toBe(1);
    expect(await row.locator('td').nth(1).textContent()).toBe('$1.00');
    // Each target with its health, and (for an operator) its Test button.
    expect(await row.locator('li').allTextContents()).toEqual(['sim-fail-before/failover-model (0, 1): ● Healthy Test', 'sim/failover-model (1, 1): ● Healthy Test']);
    await screenshots(page, 'catalog');
  });

  it('shows a target that keeps failing as cooling down, on the models page and the overview', async () => {
    const { secret: other } = await harness.newAccount('5');
    // Three failures in a row take a target out of rotation (the router's default threshold).
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await harness.post('/v1/chat/completions', { model: 'broken-model', messages: [{ role: 'user', content: 'Hi.' }] }, other);
      expect(response.status).toBeGreaterThanOrEqual(500);
      await response.text();
    }
    await page.reload();
    const row = page.getByRole('region', { name: 'Models' }).locator('tbody tr').filter({ hasText: 'broken-model' });
    await eventually(() => row.locator('li').textContent()).toMatch(/^sim-fail-before\/broken-model \(0, 1\): ◌ Cooling down until .+ \(failures in a row\) Test$/);
    await page.getByRole('link', { name: 'Overview' }).click();
    const out = page.getByRole('region', { name: 'Targets out of rotation' }).locator('tbody tr');
    await eventually(() => out.locator('td').allTextContents()).toEqual(['sim-fail-before/broken-model', '◌ Cooling down', 'Failures in a row', expect.any(String)]);
  });

  it('ran with no script error and no Content-Security-Policy violation', () => {
    expect(problems).toEqual([]);
  });
});
