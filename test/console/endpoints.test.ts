/**
 * The console in a real browser, for an operator whose keys use several endpoints: the overview's
 * spend, requests and errors by endpoint (from the usage report's `by=endpoint`), each endpoint
 * linking to its requests; the request log's endpoint column, its endpoint filter kept in the
 * address (and in the CSV export's link), and a request's endpoint in its detail. Screenshots at
 * a phone's and a desktop's size go to test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Page } from 'playwright-core';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { browserMissing, eventually, openConsole, screenshots, type OpenConsole } from '../support/browser.js';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';

const missing = browserMissing();

/** The test catalog, plus a model that serves embeddings (from the simulated provider). */
function catalogWithEmbeddings(): unknown {
  const catalog = testCatalog() as { models: unknown[] } & Record<string, unknown>;
  catalog.models.push({ id: 'embed-small', endpoints: ['embeddings'], prices: { input: '0.02', output: '0' }, targets: [{ provider: 'sim', model: 'embed-small' }] });
  return catalog;
}

describe.skipIf(missing !== null)('console usage and requests by endpoint, in Chromium', () => {
  let harness: Harness;
  let tab: OpenConsole;
  let page: Page;
  let problems: string[];
  let accountId = '';
  const sent = new Map<string, string>();

  const heading = () => page.getByRole('heading', { level: 1 }).textContent();

  beforeAll(async () => {
    harness = await startHarness({ catalog: catalogWithEmbeddings() });
    const ownerToken = (await createAdminToken(harness.store, { role: 'owner', name: 'ops lead' }, CLI_ACTOR)).secret;
    const account = await harness.newAccount('5');
    accountId = account.accountId;
    const requests: Array<[string, string, object]> = [
      ['chat', '/v1/chat/completions', { model: 'model-5.6', messages: [{ role: 'user', content: 'Hello there.' }] }],
      ['responses', '/v1/responses', { model: 'model-5.6', input: 'Hello there.' }],
      ['embeddings', '/v1/embeddings', { model: 'embed-small', input: ['one', 'two words'] }],
      ['embeddings again', '/v1/embeddings', { model: 'embed-small', input: 'three more words' }],
      // A chat model does not serve embeddings: a refusal, counted as that endpoint's error.
      ['refused', '/v1/embeddings', { model: 'model-5.6', input: 'no' }],
    ];
    for (const [name, path, body] of requests) {
      const response = await harness.post(path, body, account.secret);
      await response.text();
      sent.set(name, response.headers.get('x-request-id') ?? '');
    }
    // Rows are written in batches shortly after the requests.
    await vi.waitFor(async () => expect((await harness.store.listRequestLog({ accountId }, { limit: 10 })).rows).toHaveLength(5), { timeout: 10_000, interval: 50 });
    tab = await openConsole(harness, ownerToken);
    ({ page, problems } = tab);
  });

  afterAll(async () => {
    await tab?.close();
    await harness?.close();
  });

  it("shows the last 30 days by endpoint on the overview: each endpoint's spend, requests and errors", async () => {
    const rows = page.getByRole('region', { name: 'Endpoint totals' }).locator('tbody tr');
    await eventually(() => rows.count()).toBe(3);
    const cells = async () => (await Promise.all((await rows.all()).map((row) => row.locator('td').allTextContents()))).map(([label, spend, requests, errors]) => [label, spend?.startsWith('$'), requests, errors]);
    expect((await cells()).sort()).toEqual([
      ['/v1/chat/completions', true, '1', '0'],
      ['/v1/embeddings', true, '2', '1'],
      ['/v1/responses', true, '1', '0'],
    ]);
    await screenshots(page, 'overview-by-endpoint');
  });

  it("goes from an endpoint's row to its requests: the endpoint column and filter, kept in the address and the CSV link", async () => {
    await page.getByRole('region', { name: 'Endpoint totals' }).getByRole('link', { name: '/v1/embeddings' }).click();
    await eventually(heading).toBe('Request log');
    expect(new URL(page.url()).search).toBe('?surface=embeddings');
    expect(await page.getByLabel('Endpoint').inputValue()).toBe('embeddings');
    const list = page.getByRole('region', { name: 'Request list' });
    const rows = list.locator('tbody tr');
    await eventually(() => rows.count()).toBe(3);
    expect(await list.locator('thead th').allTextContents()).toEqual(['When', 'Request id', 'Account', 'Key', 'Endpoint', 'Model', 'Status', 'Tokens in / out', 'Cost', 'Latency']);
    expect(await rows.locator('td[data-label="Endpoint"]').allTextContents()).toEqual(['/v1/embeddings', '/v1/embeddings', '/v1/embeddings']);
    expect(await rows.locator('td[data-label="Status"]').allTextContents()).toEqual(['404 model_not_found', '200', '200']);
    expect(await page.getByRole('link', { name: 'Export these requests as CSV' }).getAttribute('href')).toBe('/admin/v1/requests?surface=embeddings&format=csv');
    await screenshots(page, 'requests-by-endpoint');

    await page.getByLabel('Endpoint').selectOption({ label: '/v1/responses' });
    await page.getByRole('button', { name: 'Filter' }).click();
    await eventually(() => new URL(page.url()).search).toBe('?surface=responses');
    await eventually(() => rows.locator('td[data-label="Request id"]').allTextContents()).toEqual([sent.get('responses')]);

    await page.getByLabel('Endpoint').selectOption({ label: 'Any' });
    await page.getByRole('button', { name: 'Filter' }).click();
    await eventually(() => rows.count()).toBe(5);
    expect(new URL(page.url()).search).toBe('');
  });

  it("shows a request's endpoint in its detail", async () => {
    const requestId = sent.get('chat') ?? '';
    await page.getByRole('link', { name: requestId }).click();
    await eventually(heading).toBe('Request');
    const endpoint = page.locator('dl.details dt', { hasText: /^Endpoint$/ }).locator('xpath=following-sibling::dd[1]');
    await eventually(() => endpoint.textContent()).toBe('/v1/chat/completions (chat-completions)');
  });

  it('ran with no script error and no Content-Security-Policy violation', () => {
    expect(problems).toEqual([]);
  });
});
