/**
 * The console in a real browser, as an operator uses it: sign in with an owner token, read the
 * overview, create an account, credit and debit it, see the ledger, rename and disable it (its key
 * is then refused on /v1), create an admin token and copy it, read the audit log, sign out.
 * Screenshots of each page at a phone's and a desktop's size go to test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAccount } from '../../src/admin/accounts.js';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { browserMissing, screenshots, statValue as stat, eventually, openConsole, type OpenConsole } from '../support/browser.js';
import { startHarness, type Harness } from '../support/harness.js';

const missing = browserMissing();

describe.skipIf(missing !== null)('console for operators, in Chromium', () => {
  let harness: Harness;
  let tab: OpenConsole;
  let page: Page;
  let problems: string[];
  let ownerToken: string;

  beforeAll(async () => {
    harness = await startHarness();
    ownerToken = (await createAdminToken(harness.store, { role: 'owner', name: 'ops lead' }, CLI_ACTOR)).secret;
    // Accounts for the overview to order, the lowest first.
    for (const [name, balance] of [['northwind', '250'], ['contoso', '0.75'], ['fabrikam', '18.5'], ['tailspin', '3.000000001']] as const) {
      await createAccount(harness.store, { name, balanceUsd: balance }, CLI_ACTOR);
    }
    tab = await openConsole(harness);
    ({ page, problems } = tab);
  });

  afterAll(async () => {
    await tab?.close();
    await harness?.close();
  });

  it('shows the sign-in page to a browser without a session, and refuses a made-up token', async () => {
    await page.goto('/console/');
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in to Tollgate');
    await screenshots(page, 'sign-in');
    await page.getByLabel('Admin token or API key').fill('tg-admin-made-up-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await eventually(() => page.getByRole('alert').textContent()).toBe('Error: Invalid token.');
  });

  it('signs in with the keyboard alone and lands on the overview, lowest balance first', async () => {
    await page.getByLabel('Admin token or API key').fill('');
    await page.getByLabel('Admin token or API key').focus();
    await page.keyboard.type(ownerToken);
    await page.keyboard.press('Enter');
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    const rows = page.getByRole('region', { name: 'Accounts closest to running out' }).locator('tbody tr');
    await eventually(() => rows.count()).toBe(4);
    const names = await rows.locator('td:first-child').allTextContents();
    expect(names).toEqual(['contoso', 'tailspin', 'fabrikam', 'northwind']);
    // Exact dollars from the API's decimal strings: nine decimals kept, no float rounding.
    expect(await rows.nth(1).locator('td').nth(1).textContent()).toBe('$3.000000001');
    // The token is not kept by the page: only an HTTP-only cookie is.
    expect(await page.evaluate<string>('document.cookie')).toBe('');
    const cookies = await page.context().cookies();
    expect(cookies.map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite])).toEqual([['tollgate_session', true, 'Strict']]);
    await screenshots(page, 'overview');
  });

  it('moves between pages with the keyboard, focus landing on the new page heading', async () => {
    let focused = '';
    // Through the overview's controls and around to the navigation.
    for (let presses = 0; presses < 40 && focused !== 'Accounts'; presses += 1) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate<string>("document.activeElement?.textContent ?? ''");
    }
    expect(focused).toBe('Accounts');
    await page.keyboard.press('Enter');
    await eventually(() => page.evaluate<string | undefined>('document.activeElement?.tagName')).toBe('H1');
    expect(new URL(page.url()).pathname).toBe('/console/accounts');
    await screenshots(page, 'accounts');
  });

  it('searches accounts by name', async () => {
    await page.getByLabel('Name contains').fill('tail');
    await page.getByRole('button', { name: 'Search' }).click();
    await eventually(() => page.locator('table tbody tr').count()).toBe(1);
    expect(await page.locator('table tbody tr td').first().textContent()).toBe('tailspin');
    expect(new URL(page.url()).search).toBe('?name=tail');
  });

  it('creates an account, credits and debits it with a reason, and shows the ledger', async () => {
    await page.getByLabel('Name', { exact: true }).fill('acme');
    await page.getByLabel('Opening balance (USD)').fill('0');
    await page.getByRole('button', { name: 'Create account' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('acme');

    await page.getByLabel('Amount (USD)').fill('10.123456789');
    await page.getByLabel('Reason').fill('top-up');
    await page.getByRole('button', { name: 'Add credit' }).click();
    await eventually(() => page.getByRole('status').filter({ hasText: 'Done:' }).textContent()).toBe('Done: Credited $10.123456789 (top-up).');
    await eventually(() => stat(page, 'Balance')).toBe('$10.123456789');

    await page.getByLabel('Debit (take off)').check();
    await page.getByLabel('Amount (USD)').fill('0.5');
    await page.getByLabel('Reason').fill('correction');
    await page.getByRole('button', { name: 'Debit' }).click();
    await eventually(() => stat(page, 'Balance')).toBe('$9.623456789');

    // A debit the balance cannot cover is refused by the API, and the page says why.
    await page.getByLabel('Amount (USD)').fill('100');
    await page.getByLabel('Reason').fill('too much');
    await page.getByRole('button', { name: 'Debit' }).click();
    await eventually(() => page.getByRole('alert').textContent()).toMatch(/^Error: /);
    expect(await stat(page, 'Balance')).toBe('$9.623456789');

    const ledger = page.getByRole('region', { name: 'Ledger' }).locator('tbody tr');
    await eventually(() => ledger.count()).toBe(2);
    // Newest first.
    expect(await ledger.nth(0).locator('td').allTextContents()).toEqual([expect.any(String), 'Debit', '− $0.50', '—', 'correction']);
    expect(await ledger.nth(1).locator('td').allTextContents()).toEqual([expect.any(String), 'Credit', '+ $10.123456789', '—', 'top-up']);
    // Times in the browser's zone (New York here), UTC on hover.
    const time = ledger.nth(0).locator('time');
    expect(await time.getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    const iso = (await time.getAttribute('datetime')) ?? '';
    const local = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'America/New_York' }).format(new Date(iso));
    expect(await time.textContent()).toBe(local);
    await screenshots(page, 'account');
  });

  it('renames and disables the account; its key is refused on /v1 from then on', async () => {
    const account = await harness.store.findAccount('acme');
    const { secret } = await createKey(harness.store, { accountRef: account?.id ?? 'acme', name: 'ci' }, CLI_ACTOR);
    const before = await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
    expect(before.status).toBe(200);

    await page.getByLabel('New name').fill('acme-corp');
    await page.getByRole('button', { name: 'Rename' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('acme-corp');

    await page.getByRole('button', { name: 'Disable account…' }).click();
    await page.getByRole('button', { name: 'Yes, disable acme-corp' }).click();
    await eventually(() => page.locator('.page-heading .status').textContent()).toBe('○ Disabled');
    expect((await harness.store.findAccount('acme-corp'))?.disabled).toBe(true);
    await eventually(async () => (await fetch(`${harness.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
  });

  it('creates an admin token, shows its secret once and copies it', async () => {
    await page.getByRole('link', { name: 'Admin tokens' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Admin tokens');
    await page.getByLabel('Role').selectOption('operator');
    await page.getByLabel('Name (optional)').fill('night shift');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = page.locator('.card-highlight pre code');
    await eventually(() => secret.textContent()).toMatch(/^tg-admin-[A-Za-z0-9]{40}$/);
    await page.getByRole('button', { name: 'Copy the new admin token' }).click();
    await eventually(() => page.evaluate<string>('navigator.clipboard.readText()')).toBe(await secret.textContent());
    await eventually(() => page.locator('table tbody tr').count()).toBe(2);
    await screenshots(page, 'admin-tokens');
  });

  it('reads the audit log, filtered by target', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Audit log');
    await page.getByLabel('Target', { exact: true }).selectOption('admin_token');
    await page.getByRole('button', { name: 'Filter' }).click();
    await eventually(() => page.locator('table tbody tr td:nth-child(2)').allTextContents()).toEqual(['admin_token.create', 'admin_token.create']);
    await page.getByLabel('Target', { exact: true }).selectOption('account');
    await page.getByRole('button', { name: 'Filter' }).click();
    await eventually(() => page.locator('table tbody tr td:nth-child(2)').allTextContents()).toContain('account.credit');
    const credit = page.locator('table tbody tr').filter({ hasText: 'account.credit' }).first();
    expect(await credit.locator('.changes li').allTextContents()).toEqual(['balance_usd: 0 → 10.123456789', 'note: top-up']);
    await credit.getByText('Before and after').click();
    expect(await credit.locator('.diff pre').first().textContent()).toContain('"balance_usd": "0"');
    await screenshots(page, 'audit');
  });

  it('signs out: the cookie is gone and the session no longer works anywhere', async () => {
    const [cookie] = await page.context().cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in to Tollgate');
    expect(await page.context().cookies()).toEqual([]);
    const replayed = await fetch(`${harness.baseUrl}/admin/v1/accounts`, { headers: { cookie: `tollgate_session=${cookie?.value ?? ''}` } });
    expect(replayed.status).toBe(401);
  });

  it("offers a viewer only what a viewer may do: no forms that change, no owner pages", async () => {
    const viewer = await createAdminToken(harness.store, { role: 'viewer', name: 'auditor' }, CLI_ACTOR);
    const session = await openConsole(harness);
    try {
      const viewerPage = session.page;
      await viewerPage.goto('/console/accounts');
      await viewerPage.getByLabel('Admin token or API key').fill(viewer.secret);
      await viewerPage.getByRole('button', { name: 'Sign in' }).click();
      await eventually(() => viewerPage.getByRole('heading', { level: 1 }).textContent()).toBe('Accounts');
      expect(await viewerPage.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()).toEqual(['Overview', 'Accounts', 'Requests', 'Models', 'Health', 'Alerts']);
      expect(await viewerPage.getByRole('heading', { name: 'New account' }).count()).toBe(0);
      await viewerPage.getByRole('link', { name: 'fabrikam' }).click();
      await eventually(() => viewerPage.getByRole('heading', { level: 1 }).textContent()).toBe('fabrikam');
      await eventually(() => viewerPage.getByRole('heading', { name: 'Ledger' }).count()).toBe(1);
      expect(await viewerPage.getByRole('heading', { name: 'Credit or debit' }).count()).toBe(0);
      expect(await viewerPage.getByRole('button', { name: /Disable/ }).count()).toBe(0);
      expect(session.problems).toEqual([]);
    } finally {
      await session.close();
    }
  });

  it('ran with no script error and no Content-Security-Policy violation', () => {
    expect(problems).toEqual([]);
  });
});
