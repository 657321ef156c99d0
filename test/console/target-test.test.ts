/**
 * Testing a target from the console's catalog page, in a real browser: an operator clicks Test on a
 * healthy target and on one whose upstream answers 500, and reads each result beside its target
 * (the upstream's message shown, its secret never); a viewer sees no Test button. Screenshots at a
 * phone's and a desktop's size go to test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { browserMissing, eventually, openConsole, screenshots, signInToConsole, type OpenConsole } from '../support/browser.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble as ChatDouble } from '../support/openai-upstream.js';
import { json, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';

const missing = browserMissing();
const SECRET = 'sk-upstream-secret-console-4242';

describe.skipIf(missing !== null)('testing a target from the catalog page, in Chromium', () => {
  let harness: Harness;
  let healthy: ChatDouble;
  let failing: UpstreamDouble;
  let tab: OpenConsole;
  let page: Page;
  let problems: string[];
  const tokens = { operator: '', viewer: '' };

  beforeAll(async () => {
    healthy = await startOpenAIUpstream({ chunks: 2, chunkDelayMs: 20 });
    failing = await startUpstreamDouble(json(500, JSON.stringify({ error: { message: `model shard offline (key ${SECRET})` } })));
    const provider = (name: string, baseUrl: string) => ({ name, type: 'openai', base_url: baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts: { first_byte_ms: 1000, idle_ms: 1000 } });
    harness = await startHarness({
      env: { TEST_UPSTREAM_KEY: SECRET },
      catalog: {
        providers: [provider('primary', healthy.baseUrl), provider('backup', failing.baseUrl)],
        models: [
          {
            id: 'gpt-house',
            prices: { input: '2.5', cached_input: '1.25', output: '10' },
            max_output_tokens: 8192,
            targets: [
              { provider: 'primary', model: 'house-large', priority: 0 },
              { provider: 'backup', model: 'house-large-eu', priority: 1 },
            ],
          },
        ],
        rate_limits: { requests: 10_000, window_seconds: 60 },
      },
    });
    tokens.operator = (await createAdminToken(harness.store, { role: 'operator', name: 'on call' }, CLI_ACTOR)).secret;
    tokens.viewer = (await createAdminToken(harness.store, { role: 'viewer', name: 'auditor' }, CLI_ACTOR)).secret;
    tab = await openConsole(harness, tokens.operator);
    ({ page, problems } = tab);
  });

  afterAll(async () => {
    await tab?.close();
    await harness?.close();
    await Promise.all([healthy?.close(), failing?.close()]);
  });

  it('an operator tests the healthy target and reads OK, its times, status and usage beside it', async () => {
    await page.goto('/console/catalog');
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Models');
    await page.getByRole('button', { name: 'Test primary/house-large of gpt-house' }).click();
    const result = page.locator('li', { hasText: 'primary/house-large' }).getByRole('status');
    await eventually(() => result.textContent()).toMatch(/^✓ OK in \d+ ms, first token \d+ ms, HTTP 200, 11 in \/ 2 out tokens$/);
    expect(healthy.requests.length).toBe(1);
    expect(healthy.requests[0]!.body.model).toBe('house-large');
  });

  it('the failing target shows the upstream 500 and its message, without the secret', async () => {
    await page.getByRole('button', { name: 'Test backup/house-large-eu of gpt-house' }).click();
    const result = page.locator('li', { hasText: 'backup/house-large-eu' }).getByRole('status');
    await eventually(() => result.textContent()).toContain('✕ Failed');
    const text = (await result.textContent()) ?? '';
    expect(text).toContain('HTTP 500');
    expect(text).toContain('model shard offline (key [redacted])');
    expect(await page.content()).not.toContain(SECRET);
    // The healthy result stays beside its own target; no failover called the healthy upstream.
    expect(await page.locator('li', { hasText: 'primary/house-large' }).getByRole('status').textContent()).toContain('✓ OK');
    expect(healthy.requests.length).toBe(1);
    await screenshots(page, 'catalog-target-test');
    expect(problems).toEqual([]);
  });

  it('a viewer sees the catalog without Test buttons', async () => {
    await page.context().clearCookies();
    await signInToConsole(page, tokens.viewer);
    await page.goto('/console/catalog');
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Models');
    await eventually(() => page.locator('li', { hasText: 'primary/house-large' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: /^Test / }).count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
