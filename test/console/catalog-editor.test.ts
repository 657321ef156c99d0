/**
 * The console's catalog editor, walked in a real browser (docs/architecture.md, "The web console"
 * and "The catalog at runtime"; README, "Catalog at runtime"). Two gateway instances on one
 * database and an OpenAI upstream double. An operator adds a provider with its key typed in and a
 * model on it, tests the target, and the official client's request is billed usage × price to the
 * nano; a price changed in the console bills the next request on the second instance, a rollback
 * in the console the old price again. The typed key reaches the upstream and nowhere else: not the
 * page, the export, the audit log or the gateways' logs. A bad price shows the server's error with
 * its field and changes nothing; removing a provider still in use shows the server's refusal. A
 * viewer, and an operator in file mode, see no edit controls. Screenshots at a phone's and a
 * desktop's size go to test-results/console/.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient } from '../support/admin-client.js';
import { browserMissing, eventually, openConsole, screenshots, signInToConsole, type OpenConsole } from '../support/browser.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble } from '../support/openai-upstream.js';
import { waitFor } from '../support/wait-for.js';

const missing = browserMissing();
const ENV = { TOLLGATE_SECRETS_KEY: randomBytes(32).toString('base64') };
const TYPED_KEY = `sk-typed-in-the-console-${randomBytes(8).toString('hex')}`;
/** The double reports 11 input tokens, 3 of them cached, and one output token per chunk. */
const CHUNKS = 5;

/** Prices as typed (USD per 1M tokens) and the same in nano-USD per 1M tokens. */
interface Prices {
  typed: { input: string; cached: string; output: string };
  nanos: { input: bigint; cached: bigint; output: bigint };
}
const FIRST: Prices = { typed: { input: '1.234567891', cached: '0.5', output: '7.000000003' }, nanos: { input: 1_234_567_891n, cached: 500_000_000n, output: 7_000_000_003n } };
const RAISED: Prices = { typed: { input: '2.5', cached: '1.25', output: '10' }, nanos: { input: 2_500_000_000n, cached: 1_250_000_000n, output: 10_000_000_000n } };

/** The double's usage at `prices`: each part rounded up to the nano, as docs/architecture.md "Money" says. */
function costAt(prices: Prices): bigint {
  const part = (tokens: bigint, perMillion: bigint): bigint => (tokens * perMillion + 999_999n) / 1_000_000n;
  return part(8n, prices.nanos.input) + part(3n, prices.nanos.cached) + part(BigInt(CHUNKS), prices.nanos.output);
}

/** A small catalog: one simulated provider and model, so that the editor's tables stay short. */
const CATALOG = {
  providers: [{ name: 'sim', type: 'simulated' }],
  models: [{ id: 'house-sim', prices: { input: '1', output: '2' }, targets: [{ provider: 'sim', model: 'house-sim' }] }],
  rate_limits: { requests: 10_000, window_seconds: 60 },
};

describe.skipIf(missing !== null)('the catalog editor in the console, on two instances, in Chromium', () => {
  let upstream: UpstreamDouble;
  let harness: Harness;
  let other: Harness;
  let tab: OpenConsole;
  let page: Page;
  let problems: string[];
  const logLines: string[] = [];
  const tokens = { operator: '', viewer: '', owner: '' };

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ chunks: CHUNKS });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = pino({ level: 'debug' }, sink);
    harness = await startHarness({ catalog: CATALOG, env: ENV, logger });
    other = await startHarness({ catalog: CATALOG, env: ENV, logger, sharedDatabase: harness.database, revisionPollMs: 500 });
    tokens.operator = (await createAdminToken(harness.store, { role: 'operator', name: 'on call' }, CLI_ACTOR)).secret;
    tokens.viewer = (await createAdminToken(harness.store, { role: 'viewer', name: 'auditor' }, CLI_ACTOR)).secret;
    tokens.owner = (await createAdminToken(harness.store, { role: 'owner', name: 'lead' }, CLI_ACTOR)).secret;
    tab = await openConsole(harness, tokens.operator);
    ({ page, problems } = tab);
  });

  afterAll(async () => {
    await tab?.close();
    await other?.close();
    await harness?.close();
    await upstream?.close();
  });

  async function openEditor(): Promise<void> {
    await page.goto('/console/catalog/edit');
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Edit catalog');
    await page.getByRole('region', { name: 'Providers' }).waitFor();
  }

  /** What the page says it did (the success notice). */
  const done = () => page.locator('.notice-success').textContent();

  /** One request through the official client to `house-model` on `target`: its one charge, settled. */
  async function billedFor(target: Harness): Promise<bigint> {
    const account = await target.newAccount('10');
    const answer = await target.client(account.secret).chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.content).toBe('word '.repeat(CHUNKS));
    await waitFor(async () => (await target.store.countOpenHolds(account.accountId)) === 0);
    const charges = (await target.store.listLedger(account.accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toHaveLength(1);
    return charges[0]!.amountNanos;
  }

  async function servedVersion(target: Harness): Promise<unknown> {
    return (await adminClient(target.baseUrl)('GET', '/catalog/document', tokens.viewer)).body.version;
  }

  it('an operator adds a provider with its API key typed in: the page says "stored" and never shows the key', async () => {
    await page.goto('/console/catalog');
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Models');
    await page.getByRole('link', { name: 'Edit catalog' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Edit catalog');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByLabel('Name', { exact: true }).fill('house-openai');
    await page.getByLabel('Type', { exact: true }).selectOption('openai');
    await page.getByLabel('Base URL').fill(upstream.baseUrl);
    await page.getByLabel('API key').fill(TYPED_KEY);
    await screenshots(page, 'catalog-editor-provider-form');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await eventually(done).toBe('Done: Provider “house-openai” added: version 2. Its key is stored sealed and is not shown again.');
    const row = page.getByRole('region', { name: 'Providers' }).getByRole('row', { name: /house-openai/ });
    await eventually(() => row.textContent()).toContain('stored');
    expect(await row.textContent()).toContain(upstream.baseUrl);
    expect(await page.content()).not.toContain(TYPED_KEY);
  });

  it('adds a model with its prices and one target on that provider', async () => {
    await page.getByRole('button', { name: 'Add model' }).click();
    await page.getByLabel('Model id').fill('house-model');
    await page.getByLabel('Input', { exact: true }).fill(FIRST.typed.input);
    await page.getByLabel('Cached input (optional)').fill(FIRST.typed.cached);
    await page.getByLabel('Output', { exact: true }).fill(FIRST.typed.output);
    await page.getByLabel('Provider', { exact: true }).selectOption('house-openai');
    await page.getByLabel('Upstream model').fill('house-large');
    await page.getByRole('button', { name: 'Add model' }).click();
    await eventually(done).toBe('Done: Model “house-model” added: version 3.');
    const row = page.getByRole('region', { name: 'Models in the document' }).getByRole('row', { name: /house-model/ });
    expect(await row.textContent()).toContain('house-openai/house-large (0, 1)');
    expect(await row.textContent()).toContain('$1.234567891');
    await screenshots(page, 'catalog-editor');
    expect(await page.content()).not.toContain(TYPED_KEY);
  });

  it('Test on the Models page answers OK, through the upstream with the typed key', async () => {
    await page.getByRole('link', { name: 'Models', exact: true }).first().click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Models');
    await page.getByRole('button', { name: 'Test house-openai/house-large of house-model' }).click();
    const result = page.locator('li', { hasText: 'house-openai/house-large' }).getByRole('status');
    await eventually(() => result.textContent()).toMatch(/^✓ OK in \d+ ms, first token \d+ ms, HTTP 200, 11 in \/ 5 out tokens$/);
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TYPED_KEY}`);
    expect(upstream.requests.at(-1)?.body.model).toBe('house-large');
    await screenshots(page, 'catalog-models');
    expect(await page.content()).not.toContain(TYPED_KEY);
  });

  it('a request through the openai SDK on the first instance is billed usage × the price, to the nano', async () => {
    expect(await billedFor(harness)).toBe(costAt(FIRST));
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TYPED_KEY}`);
  });

  it('a price changed in the console bills the next request on the second instance at the new price, without a restart', async () => {
    await openEditor();
    await page.getByRole('button', { name: 'Edit house-model' }).click();
    await eventually(() => page.getByLabel('Input', { exact: true }).inputValue()).toBe(FIRST.typed.input);
    await page.getByLabel('Input', { exact: true }).fill(RAISED.typed.input);
    await page.getByLabel('Cached input (optional)').fill(RAISED.typed.cached);
    await page.getByLabel('Output', { exact: true }).fill(RAISED.typed.output);
    await page.getByLabel('Note (optional)', { exact: true }).fill('price rise');
    await screenshots(page, 'catalog-editor-model-form');
    await page.getByRole('button', { name: 'Save model' }).click();
    await eventually(done).toBe('Done: Model “house-model” saved: version 4.');
    await waitFor(async () => (await servedVersion(other)) === 4, 2_000);
    expect(await billedFor(other)).toBe(costAt(RAISED));
    expect(costAt(RAISED)).not.toBe(costAt(FIRST));
  });

  it('a rollback in the console to the version before the price change bills the old price again', async () => {
    await page.goto('/console/catalog/versions');
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Catalog versions');
    const raise = page.getByRole('row', { name: /Version 4/ });
    await eventually(() => raise.textContent()).toContain('price rise');
    expect(await raise.textContent()).toContain('Prices changed: house-model');
    expect(await page.getByRole('row', { name: /Version 4/ }).textContent()).toContain('served now');
    await page.getByRole('button', { name: 'Roll back to this version… (3)' }).click();
    await page.getByRole('button', { name: 'Yes, roll back to version 3' }).click();
    await eventually(done).toBe('Done: Rolled back to version 3: version 5 is served now.');
    await eventually(() => page.getByRole('row', { name: /Version 5/ }).textContent()).toContain('rollback to version 3');
    await screenshots(page, 'catalog-versions');
    expect(await billedFor(harness)).toBe(costAt(FIRST));
    await waitFor(async () => (await servedVersion(other)) === 5, 2_000);
    expect(await billedFor(other)).toBe(costAt(FIRST));

    await page.getByRole('link', { name: 'Version 2', exact: true }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Catalog version 2');
    const document = page.getByLabel('Document of version 2');
    await eventually(() => document.textContent()).toContain('"api_key": "[stored]"');
    expect(await page.locator('dl.details').textContent()).toContain('Providers added: house-openai');
    await screenshots(page, 'catalog-version');
    expect(await page.content()).not.toContain(TYPED_KEY);
  });

  it('a bad price shows the server\'s error naming the field and the model, and changes nothing', async () => {
    await openEditor();
    await page.getByRole('button', { name: 'Edit house-model' }).click();
    await page.getByLabel('Input', { exact: true }).fill('abc');
    await page.getByRole('button', { name: 'Save model' }).click();
    const alert = page.getByRole('region', { name: 'Edit model house-model' }).getByRole('alert');
    await eventually(() => alert.textContent()).toBe('Error: models[1].prices.input: a decimal USD amount (model “house-model”)');
    expect(await page.getByLabel('Input', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Output', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    await screenshots(page, 'catalog-editor-error');
    expect(await harness.store.latestCatalogVersionId()).toBe(5);
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('removing a provider still in use shows the server\'s refusal; a model is disabled, enabled and removed', async () => {
    await page.getByRole('button', { name: 'Remove… house-openai' }).click();
    await page.getByRole('button', { name: 'Yes, remove house-openai' }).click();
    const providers = page.getByRole('region', { name: 'Providers' });
    await eventually(() => providers.getByRole('alert').textContent()).toContain('no provider named "house-openai"');
    expect(await harness.store.latestCatalogVersionId()).toBe(5);

    await page.getByRole('button', { name: 'Disable house-sim' }).click();
    await eventually(done).toBe('Done: Model “house-sim” disabled: version 6.');
    await eventually(() => page.getByRole('row', { name: /house-sim/ }).textContent()).toContain('disabled');
    const account = await harness.newAccount('1');
    await expect(harness.client(account.secret).chat.completions.create({ model: 'house-sim', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 503 });
    await page.getByRole('button', { name: 'Enable house-sim' }).click();
    await eventually(done).toBe('Done: Model “house-sim” enabled: version 7.');
    await page.getByRole('button', { name: 'Remove… house-sim' }).click();
    await page.getByRole('button', { name: 'Yes, remove house-sim' }).click();
    await eventually(done).toBe('Done: Model “house-sim” removed: version 8.');
    await eventually(() => page.getByRole('row', { name: /house-sim/ }).count()).toBe(0);
    const served = (await adminClient(harness.baseUrl)('GET', '/catalog/document', tokens.viewer)).body.document as { models: Array<{ id: string }> };
    expect(served.models.map((model) => model.id)).toEqual(['house-model']);
  });

  it('the export shows "[stored]" and never the key; the export imported back keeps the stored key', async () => {
    const exported = await page.getByLabel('Catalog document (export)').inputValue();
    expect(exported).toContain('"api_key": "[stored]"');
    expect(exported).not.toContain(TYPED_KEY);
    await page.getByLabel('Document (JSON)').fill(exported);
    await page.getByLabel('Import note (optional)').fill('round trip');
    await page.getByRole('button', { name: 'Import as a new version' }).click();
    await eventually(done).toBe('Done: Document imported: version 9.');
    expect(await billedFor(harness)).toBe(costAt(FIRST));
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TYPED_KEY}`);
    expect(await page.content()).not.toContain(TYPED_KEY);
  });

  it('the audit log has every catalog change, on the console too; the typed key is in no audit row and no log line', async () => {
    const audit = await harness.store.listAudit({ targetType: 'catalog' }, { limit: 50 });
    expect(audit.rows.map((row) => [row.action, row.targetId])).toEqual([
      ['catalog.put', '9'],
      ['catalog.put', '8'],
      ['catalog.put', '7'],
      ['catalog.put', '6'],
      ['catalog.rollback', '5'],
      ['catalog.put', '4'],
      ['catalog.put', '3'],
      ['catalog.put', '2'],
    ]);
    expect(audit.rows.find((row) => row.action === 'catalog.rollback')).toMatchObject({ before: { version: 4 }, after: { version: 5, rolled_back_to: 3 } });
    expect(JSON.stringify(audit.rows)).not.toContain(TYPED_KEY);
    // And on the console's audit log, for its owner.
    await page.context().clearCookies();
    await signInToConsole(page, tokens.owner);
    await page.goto('/console/audit?target_type=catalog');
    const entries = page.getByRole('region', { name: 'Audit log' }).getByRole('row');
    await eventually(() => entries.count()).toBe(9);
    expect(await entries.nth(5).textContent()).toContain('catalog.rollback');
    await screenshots(page, 'catalog-audit');
    await page.getByRole('link', { name: 'Catalog version 5' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Catalog version 5');
    expect(await page.content()).not.toContain(TYPED_KEY);
    // The sink saw the gateways' lines (requests, the catalog swaps), and none holds the key.
    expect(logLines.length).toBeGreaterThan(10);
    expect(logLines.join('\n')).not.toContain(TYPED_KEY);
    expect(problems).toEqual([]);
  });

  it('a viewer reads the catalog document and its versions with no edit controls', async () => {
    await page.context().clearCookies();
    await signInToConsole(page, tokens.viewer);
    await page.goto('/console/catalog');
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Models');
    await eventually(() => page.getByRole('link', { name: 'Catalog document' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Edit catalog' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Catalog document' }).click();
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Catalog document');
    await eventually(() => page.getByRole('region', { name: 'Providers' }).getByRole('row', { name: /house-openai/ }).textContent()).toContain('stored');
    expect(await page.getByRole('button').allTextContents()).toEqual(['Sign out', 'Copy the catalog document']);
    expect(await page.getByLabel('Document (JSON)').count()).toBe(0);
    await screenshots(page, 'catalog-editor-viewer');
    await page.goto('/console/catalog/versions');
    await eventually(() => page.getByRole('row', { name: /Version 9/ }).count()).toBe(1);
    expect(await page.getByRole('button', { name: /Roll back/ }).count()).toBe(0);
    expect(await page.content()).not.toContain(TYPED_KEY);
    expect(problems).toEqual([]);
  });
});

describe.skipIf(missing !== null)('the catalog editor in file mode, in Chromium', () => {
  it('says the config file manages the catalog and shows an operator no edit controls', async () => {
    const harness = await startHarness({ catalog: { ...CATALOG, catalog: { source: 'file' } }, env: ENV });
    let tab: OpenConsole | undefined;
    try {
      const operator = (await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR)).secret;
      tab = await openConsole(harness, operator);
      const { page, problems } = tab;
      await page.goto('/console/catalog/edit');
      await eventually(() => page.getByRole('note').first().textContent()).toContain('Managed by the config file');
      await eventually(() => page.getByRole('row', { name: /house-sim/ }).count()).toBe(1);
      expect(await page.getByRole('button').allTextContents()).toEqual(['Sign out', 'Copy the catalog document']);
      await page.goto('/console/catalog/versions');
      await eventually(() => page.getByRole('note').first().textContent()).toContain('Managed by the config file');
      expect(await page.getByRole('button', { name: /Roll back/ }).count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await tab?.close();
      await harness.close();
    }
  });
});
