/**
 * The console's Models page in a real browser, with a pool of upstream keys: after traffic in
 * which the upstream refused one key and rate-limited another, the operator sees each key by its
 * name with its state (serving, refused, rate limited until when) and its calls, and never a key.
 * Screenshots at a phone's and a desktop's size go to test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { browserMissing, eventually, openConsole, screenshots, type OpenConsole } from '../support/browser.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startKeyedUpstream, type KeyedUpstream } from '../support/keyed-upstream.js';

const missing = browserMissing();
const SECRETS = { POOL_KEY_PRIMARY: 'sk-console-primary-5e6f', POOL_KEY_REVOKED: 'sk-console-revoked-7a8b', POOL_KEY_LIMITED: 'sk-console-limited-9c0d' };

describe.skipIf(missing !== null)('upstream keys in the console, in Chromium', () => {
  let harness: Harness;
  let upstream: KeyedUpstream;
  let tab: OpenConsole;
  let page: Page;
  let problems: string[];
  let ownerToken: string;

  beforeAll(async () => {
    upstream = await startKeyedUpstream((key) => {
      if (key === SECRETS.POOL_KEY_REVOKED) return { status: 401 };
      // Long enough to still be cooling while the page is read.
      if (key === SECRETS.POOL_KEY_LIMITED) return { status: 429, headers: { 'retry-after': '600' } };
      return { status: 200 };
    });
    const keys = [
      { name: 'primary', env: 'POOL_KEY_PRIMARY' },
      { name: 'revoked', env: 'POOL_KEY_REVOKED' },
      { name: 'limited', env: 'POOL_KEY_LIMITED' },
    ];
    harness = await startHarness({
      catalog: {
        providers: [{ name: 'pool', type: 'openai', base_url: upstream.baseUrl, api: 'chat', api_keys: keys }],
        models: [{ id: 'pool-model', prices: { input: '1', output: '4' }, max_output_tokens: 64, targets: [{ provider: 'pool', model: 'upstream-model' }] }],
      },
      env: SECRETS,
    });
    ownerToken = (await createAdminToken(harness.store, { role: 'owner', name: 'ops lead' }, CLI_ACTOR)).secret;
    const { secret } = await harness.newAccount('1');
    for (let index = 0; index < 4; index++) {
      const answer = await harness.post('/v1/chat/completions', { model: 'pool-model', messages: [{ role: 'user', content: 'hi' }] }, secret);
      expect(answer.status).toBe(200);
    }
    tab = await openConsole(harness, ownerToken);
    ({ page, problems } = tab);
  });

  afterAll(async () => {
    await tab?.close();
    await harness?.close();
    await upstream?.close();
  });

  it('shows each key of the pool by name, its state and its calls, on the Models page', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Models' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Models');

    const rows = page.getByRole('region', { name: 'Upstream keys' }).locator('tbody tr');
    await eventually(() => rows.count()).toBe(3);
    const cells = async (index: number) => (await rows.nth(index).locator('td').allTextContents()).map((text) => text.trim());
    // primary served all four; revoked and limited were each met once, on the first two requests.
    expect(await cells(0)).toEqual(['pool', 'primary', '● Serving', '4']);
    expect(await cells(1)).toEqual(['pool', 'revoked', '✕ Refused: out until restart', '1']);
    const limited = await cells(2);
    expect(limited.slice(0, 2)).toEqual(['pool', 'limited']);
    expect(limited[2]).toMatch(/^◌ Rate limited until /);
    expect(limited[3]).toBe('1');
    // When it is back, in the operator's time zone, with the exact UTC time as its title.
    const until = rows.nth(2).locator('time');
    expect(Date.parse((await until.getAttribute('datetime')) ?? '') - Date.now()).toBeGreaterThan(500_000);

    const text = (await page.locator('main').textContent()) ?? '';
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    await screenshots(page, 'upstream-keys');
    expect(problems).toEqual([]);
  });
});
