/**
 * The console in a real browser, as the holder of an API key uses it: the key (made with the
 * `tollgate` CLI, as an operator would) signs in; the page shows the account's balance, the key's
 * limits, the models it may use with their prices, and ready examples to copy. It cannot reach
 * another account: the operator pages do not exist for it, and the admin API answers 403 to its
 * session from inside the page. Disabling the key ends the session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { browserMissing, screenshots, statValue as stat, eventually, openConsole, type OpenConsole } from '../support/browser.js';
import { useCliOnTempDatabase } from '../support/cli-runner.js';
import { startHarness, type Harness } from '../support/harness.js';

/** The endpoints a model serves by default, as the models page lists them under its id. */
const GENERATIVE = '/v1/responses · /v1/chat/completions · /v1/messages';
const missing = browserMissing();

describe.skipIf(missing !== null)('console for key holders, in Chromium', () => {
  const cli = useCliOnTempDatabase('tollgate-console-');
  let harness: Harness;
  let tab: OpenConsole;
  let page: Page;
  let problems: string[];
  let key: { id: string; key: string };

  async function tollgate(argv: string[]): Promise<unknown> {
    const run = await cli.run([...argv, '--json'], { TOLLGATE_DATABASE_URL: harness.database.url });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    return JSON.parse(run.stdout) as unknown;
  }

  beforeAll(async () => {
    harness = await startHarness();
    tab = await openConsole(harness);
    ({ page, problems } = tab);
  });

  afterAll(async () => {
    await tab?.close();
    await harness?.close();
  });

  it('signs in with a key made by the CLI and shows the balance and the key', async () => {
    await tollgate(['accounts', 'create', '--name', 'globex', '--balance', '3.5']);
    await tollgate(['accounts', 'create', '--name', 'initech', '--balance', '900']);
    key = (await tollgate(['keys', 'create', '--account', 'globex', '--name', 'laptop', '--models', 'model-5.6,model-5.6-mini', '--rpm', '120', '--budget', '1.25', '--budget-period', 'month'])) as { id: string; key: string };

    // The address without its slash works too.
    await page.goto('/console');
    await page.getByLabel('Admin token or API key').fill(key.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Balance and key');
    expect(new URL(page.url()).pathname).toBe('/console/');
    await eventually(() => stat(page, 'Balance')).toBe('$3.50');
    expect(await stat(page, 'Available')).toBe('$3.50');
    const details = await page.locator('dl.details').innerText();
    expect(details).toContain('laptop');
    expect(details).toContain('model-5.6, model-5.6-mini');
    expect(details).toContain('120');
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()).toEqual(['Balance and key', 'Models', 'Connect']);
    expect(await stat(page, 'Budget per month')).toBe('$1.25');
    expect(await stat(page, 'Left')).toBe('$1.25');
    await eventually(() => page.getByText('No usage in this range.').count()).toBe(1);
  });

  it('lists only the models the key may use, with the endpoints each serves and exact prices per million tokens', async () => {
    await page.getByRole('link', { name: 'Models' }).click();
    await eventually(() => page.locator('tbody tr').count()).toBe(2);
    const rows = await page.locator('tbody tr').evaluateAll((found) => found.map((row) => [...row.children].map((cell) => cell.textContent)));
    expect(rows).toEqual([
      [`model-5.6${GENERATIVE}`, '$1.00', '$0.50', '$1.00', '$4.00', '—', 'low, medium, high, xhigh, max', '4,096', '$0.016384'],
      [`model-5.6-mini${GENERATIVE}`, '$1.00', '$0.50', '$1.00', '$4.00', '—', '—', '512', '$0.002048'],
    ]);
    // What a hold may take, next to what it holds: the key's budget ($1.25 a month) is less than the balance.
    const explained = await page.locator('.hold-explained').innerText();
    expect(explained).toContain("Left to hold now: $1.25 (your key's budget)");
    expect(explained).toContain('x-tollgate-hold-needed-usd');
    await screenshots(page, 'key-models');
  });

  it('shows the base URL and examples to copy', async () => {
    await page.getByRole('link', { name: 'Connect' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Connect');
    await page.getByRole('button', { name: 'Copy the base URL' }).click();
    await eventually(() => page.evaluate<string>('navigator.clipboard.readText()')).toBe(`${harness.baseUrl}/v1`);
    await page.getByRole('button', { name: 'Copy the Codex (~/.codex/config.toml) example' }).click();
    const codex = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(codex).toContain(`base_url = "${harness.baseUrl}/v1"`);
    expect(codex).toContain('model = "model-5.6"');
    // The key is never on the page again: the examples read it from the environment.
    expect(await page.content()).not.toContain(key.key);
    await screenshots(page, 'key-connect');
  });

  it('cannot reach another account: no operator pages, and 403 from the admin API inside the page', async () => {
    await page.goto('/console/accounts');
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Page not found');
    const statuses = await page.evaluate(async () => {
      const answers = await Promise.all(
        ['/admin/v1/accounts', '/admin/v1/accounts/initech', '/admin/v1/accounts/initech/ledger', '/admin/v1/audit', '/admin/v1/admin-tokens'].map((path) => fetch(path)),
      );
      const credit = await fetch('/admin/v1/accounts/globex/credit', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-tollgate-console': '1' },
        body: JSON.stringify({ amount_usd: '1000', reason: 'free money' }),
      });
      return [...answers, credit].map((answer) => answer.status);
    });
    expect(statuses).toEqual([403, 403, 403, 403, 403, 403]);
    const globex = await harness.store.findAccount('globex');
    expect(globex?.balanceNanos).toBe(3_500_000_000n);
  });

  it("sees its own requests and usage, never another key's or account's", async () => {
    const sibling = (await tollgate(['keys', 'create', '--account', 'globex', '--name', 'sibling'])) as { key: string };
    const stranger = (await tollgate(['keys', 'create', '--account', 'initech', '--name', 'stranger'])) as { key: string };
    const send = async (secret: string): Promise<string> => {
      const response = await harness.post('/v1/chat/completions', { model: 'model-5.6', messages: [{ role: 'user', content: 'Hi.' }] }, secret);
      expect(response.status).toBe(200);
      await response.text();
      return response.headers.get('x-request-id') ?? '';
    };
    const own = await send(key.key);
    const others = [await send(sibling.key), await send(stranger.key)];
    const requestIds = page.getByRole('region', { name: 'Request list' }).locator('tbody tr td[data-label="Request id"]');
    // The log is written in batches shortly after: read the page again until the request is there.
    await eventually(async () => {
      await page.goto('/console/');
      await page.getByText(/No requests match|model-5\.6/).first().waitFor();
      return requestIds.allTextContents();
    }).toEqual([own]);
    const content = await page.content();
    for (const id of others) expect(content).not.toContain(id);
    const spend = page.locator('figure.chart-card').filter({ hasText: 'Requests' }).locator('.chart-total');
    await eventually(() => spend.textContent()).toBe('1');
    expect(await stat(page, 'Spent')).not.toBe('$0.00');
    await screenshots(page, 'key-home');
  });

  it('ends the session once the CLI disables the key', async () => {
    await tollgate(['keys', 'disable', key.id]);
    await page.goto('/console/models');
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in to Tollgate');
  });

  it('ran with no script error and no Content-Security-Policy violation', () => {
    expect(problems).toEqual([]);
  });
});
