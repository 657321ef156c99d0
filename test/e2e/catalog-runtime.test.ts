/**
 * The catalog at runtime (docs/architecture.md, "The catalog at runtime"; README, "Catalog at
 * runtime"): a real gateway, and a second instance on the same database, with an OpenAI upstream
 * double. A model put through the admin API is billed at its price on the next request without a
 * restart, a price change and a rollback likewise; the other instance serves the change within a
 * second; a request in flight is billed at the version it started with; a bad document is refused
 * with its field; upstream secrets are sealed, sent upstream and never shown; every change is
 * audited with the versions before and after. In file mode (`catalog.source: file`) changes are 409.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient, type AdminCall } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble } from '../support/openai-upstream.js';
import { waitFor } from '../support/wait-for.js';

const SECRETS_KEY = randomBytes(32).toString('base64');
const ENV = { TEST_UPSTREAM_KEY: 'sk-from-env', TOLLGATE_SECRETS_KEY: SECRETS_KEY };
/** The double reports 11 input tokens (3 cached) and one output token per chunk. */
const CHUNKS = 5;
type Document = { providers: Array<Record<string, unknown>>; models: Array<Record<string, unknown>> };

/** Nano-USD of the double's usage at `input` (cached alike) and `output` USD per 1M tokens. */
function costAt(input: number, output: number): bigint {
  return BigInt(11 * input * 1000 + CHUNKS * output * 1000);
}

function withModel(document: Document, input: string, output: string): Document {
  const model = { id: 'runtime-model', prices: { input, cached_input: input, output }, max_output_tokens: 64, targets: [{ provider: 'upstream', model: 'upstream-model' }] };
  return { ...document, models: [...document.models.filter((entry) => entry.id !== 'runtime-model'), model] };
}

describe.each(engines)('the catalog at runtime on %s', (engine) => {
  let upstream: UpstreamDouble;
  let harness: Harness;
  let other: Harness;
  let call: AdminCall;
  let otherCall: AdminCall;
  const tokens = { operator: '', viewer: '' };
  let seeded: Document;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ chunks: CHUNKS, chunkDelayMs: 120 });
    const catalog = testCatalog({ upstreamBaseUrl: upstream.baseUrl });
    harness = await startHarness({ engine, catalog, env: ENV });
    other = await startHarness({ engine, catalog, env: ENV, sharedDatabase: harness.database, revisionPollMs: 500 });
    call = adminClient(harness.baseUrl);
    otherCall = adminClient(other.baseUrl);
    for (const role of ['operator', 'viewer'] as const) tokens[role] = (await createAdminToken(harness.store, { role }, CLI_ACTOR)).secret;
  });

  afterAll(async () => {
    await other?.close();
    await harness?.close();
    await upstream?.close();
  });

  async function put(document: unknown, token = tokens.operator) {
    return call('PUT', '/catalog/document', token, { document, note: 'test' });
  }

  async function billedFor(target: Harness, stream = false): Promise<bigint> {
    const account = await target.newAccount('10');
    const client = target.client(account.secret);
    if (stream) {
      const events = await client.chat.completions.create({ model: 'runtime-model', messages: [{ role: 'user', content: 'hi' }], stream: true });
      for await (const _event of events) void _event;
    } else {
      await client.chat.completions.create({ model: 'runtime-model', messages: [{ role: 'user', content: 'hi' }] });
    }
    await waitFor(async () => (await target.store.countOpenHolds(account.accountId)) === 0);
    const charges = (await target.store.listLedger(account.accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toHaveLength(1);
    return charges[0]!.amountNanos;
  }

  it('seeds version 1 from the file and exports it', async () => {
    const exported = await call('GET', '/catalog/document', tokens.viewer);
    expect(exported.status).toBe(200);
    expect(exported.body).toMatchObject({ version: 1, source: 'database' });
    seeded = exported.body.document as Document;
    expect(seeded.providers.find((provider) => provider.name === 'upstream')).toMatchObject({ type: 'openai', api_key_env: 'TEST_UPSTREAM_KEY' });
    expect(seeded.models.some((model) => model.id === 'runtime-model')).toBe(false);
    const versions = await call('GET', '/catalog/versions', tokens.viewer);
    expect((versions.body.data as unknown[]).length).toBe(1);
  });

  it('serves a model put through the API at its price, here at once and on the other instance within a second', async () => {
    const client = harness.client((await harness.newAccount('1')).secret);
    await expect(client.chat.completions.create({ model: 'runtime-model', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 503 });
    const before = (await harness.store.latestCatalogVersionId())!;
    const changed = await put(withModel(seeded, '1', '4'));
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ version: before + 1, previous: before, diff: { models: { added: ['runtime-model'], removed: [], changed: [] }, prices_changed: [] } });
    expect(await billedFor(harness)).toBe(costAt(1, 4));
    // Measured under its own name, not as `unknown`.
    expect(await (await fetch(`${harness.baseUrl}/metrics`)).text()).toContain('model="runtime-model"');
    // And priced on the key holder's console page.
    const holder = await harness.newAccount('1');
    const models = (await (await fetch(`${harness.baseUrl}/console/api/self/models`, { headers: { authorization: `Bearer ${holder.secret}` } })).json()) as { data: Array<{ id: string; prices_usd_per_million_tokens: { output: string } }> };
    expect(models.data.find((model) => model.id === 'runtime-model')?.prices_usd_per_million_tokens.output).toBe('4');
    const putAt = Date.now();
    await waitFor(async () => (await otherCall('GET', '/catalog/document', tokens.viewer)).body.version === before + 1, 3_000);
    expect(Date.now() - putAt).toBeLessThan(1_500);
    expect(await billedFor(other)).toBe(costAt(1, 4));
  });

  it('bills the next request at a changed price, and at the old one after a rollback', async () => {
    const atFirstPrice = (await harness.store.latestCatalogVersionId())!;
    const changed = await put(withModel(seeded, '10', '40'));
    expect(changed.body).toMatchObject({ version: atFirstPrice + 1, diff: { models: { added: [], removed: [], changed: ['runtime-model'] }, prices_changed: ['runtime-model'] } });
    expect(await billedFor(harness)).toBe(costAt(10, 40));
    const rolledBack = await call('POST', `/catalog/versions/${atFirstPrice}/rollback`, tokens.operator);
    expect(rolledBack.status).toBe(200);
    expect(rolledBack.body).toMatchObject({ version: atFirstPrice + 2, previous: atFirstPrice + 1, diff: { prices_changed: ['runtime-model'] } });
    expect(await billedFor(harness)).toBe(costAt(1, 4));
    const version = await call('GET', `/catalog/versions/${atFirstPrice + 2}`, tokens.viewer);
    expect(version.body).toMatchObject({ id: atFirstPrice + 2, note: `rollback to version ${atFirstPrice}`, diff: { prices_changed: ['runtime-model'] } });
    expect(version.body.document).toEqual((await call('GET', `/catalog/versions/${atFirstPrice}`, tokens.viewer)).body.document);
    const missing = await call('POST', '/catalog/versions/9999/rollback', tokens.operator);
    expect(missing.status).toBe(404);

    const audit = await harness.store.listAudit({ targetType: 'catalog' }, { limit: 10 });
    expect(audit.rows[0]).toMatchObject({ action: 'catalog.rollback', targetId: String(atFirstPrice + 2), before: { version: atFirstPrice + 1 }, after: { version: atFirstPrice + 2, rolled_back_to: atFirstPrice, diff: { prices_changed: ['runtime-model'] } } });
    expect(audit.rows[1]).toMatchObject({ action: 'catalog.put', targetId: String(atFirstPrice + 1), before: { version: atFirstPrice }, after: { version: atFirstPrice + 1 } });
    // The admin API's audit filter reads them too (the console's audit page filters by it).
    const listed = await call('GET', '/audit?target_type=catalog&limit=2', tokens.viewer);
    expect(listed.status).toBe(200);
    expect((listed.body.data as Array<{ action: string; target_id: string }>).map((entry) => [entry.action, entry.target_id])).toEqual([
      ['catalog.rollback', String(atFirstPrice + 2)],
      ['catalog.put', String(atFirstPrice + 1)],
    ]);
  });

  it('bills a request in flight at the version it started with', async () => {
    const account = await harness.newAccount('10');
    const seen = upstream.requests.length;
    const events = await harness.client(account.secret).chat.completions.create({ model: 'runtime-model', messages: [{ role: 'user', content: 'hi' }], stream: true });
    await waitFor(async () => upstream.requests.length > seen);
    expect((await put(withModel(seeded, '100', '400'))).status).toBe(200);
    let text = '';
    for await (const event of events) text += event.choices[0]?.delta.content ?? '';
    expect(text).toBe('word '.repeat(CHUNKS));
    await waitFor(async () => (await harness.store.countOpenHolds(account.accountId)) === 0);
    const charges = (await harness.store.listLedger(account.accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges.map((entry) => entry.amountNanos)).toEqual([costAt(1, 4)]);
    expect(await billedFor(harness, true)).toBe(costAt(100, 400));
  });

  it("applies a model's log_bodies from the next request, and stops keeping bodies once it is turned off", async () => {
    const logged = async (on: boolean): Promise<{ requestBody: string | null; responseBody: string | null }> => {
      const document = withModel(seeded, '1', '4');
      if (on) document.models = document.models.map((model) => (model.id === 'runtime-model' ? { ...model, log_bodies: { max_bytes: 10_000 } } : model));
      expect((await put(document)).status).toBe(200);
      const account = await harness.newAccount('1');
      await harness.client(account.secret).chat.completions.create({ model: 'runtime-model', messages: [{ role: 'user', content: 'keep me' }] });
      let rows: Array<{ requestBody: string | null; responseBody: string | null }> = [];
      await waitFor(async () => {
        rows = (await harness.store.listRequestLog({ accountId: account.accountId }, { limit: 5 })).rows;
        return rows.length === 1;
      });
      return rows[0]!;
    };
    const kept = await logged(true);
    expect(kept.requestBody).toContain('keep me');
    expect(kept.responseBody).toContain('word');
    expect(await logged(false)).toMatchObject({ requestBody: null, responseBody: null });
  });

  it('refuses an invalid document with the field at fault, and a viewer', async () => {
    const latest = await harness.store.latestCatalogVersionId();
    const badPrice = withModel(seeded, '1', '4');
    badPrice.models[0] = { ...badPrice.models[0], prices: { input: 'cheap', output: '1' } };
    const refused = await put(badPrice);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ param: 'models[0].prices.input', type: 'invalid_request_error' });
    const unknownProvider = withModel(seeded, '1', '4');
    unknownProvider.models.push({ id: 'orphan', prices: { input: '1', output: '1' }, targets: [{ provider: 'nowhere', model: 'x' }] });
    const orphan = await put(unknownProvider);
    expect(orphan.status).toBe(400);
    expect(orphan.body.error).toMatchObject({ param: `models[${unknownProvider.models.length - 1}].targets[0].provider`, message: expect.stringContaining('no provider named "nowhere"') as unknown });
    const extra = await put({ ...seeded, rate_limits: {} });
    expect(extra.status).toBe(400);
    expect((await put(withModel(seeded, '1', '4'), tokens.viewer)).status).toBe(403);
    expect(await harness.store.latestCatalogVersionId()).toBe(latest);
  });

  it('stores an upstream secret sealed, sends it upstream, never shows it, and keeps or rotates it', async () => {
    const secret = `sk-entered-${randomBytes(6).toString('hex')}`;
    const withSecret = (value: string): Document => {
      const document = withModel(seeded, '1', '4');
      return { ...document, providers: document.providers.map((provider) => (provider.name === 'upstream' ? { ...Object.fromEntries(Object.entries(provider).filter(([key]) => key !== 'api_key_env')), api_key: value } : provider)) };
    };
    const stored = await put(withSecret(secret));
    expect(stored.status).toBe(200);
    const version = stored.body.version as number;
    await billedFor(harness);
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${secret}`);

    const exported = await call('GET', '/catalog/document', tokens.viewer);
    expect(JSON.stringify(exported.body)).not.toContain(secret);
    expect((exported.body.document as Document).providers.find((provider) => provider.name === 'upstream')).toMatchObject({ api_key: '[stored]' });
    expect(JSON.stringify((await call('GET', `/catalog/versions/${version}`, tokens.viewer)).body)).not.toContain(secret);
    const row = await harness.store.findCatalogVersion(version);
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(row?.secrets?.upstream).toMatch(/^tg1\./);
    const audit = await harness.store.listAudit({ targetType: 'catalog' }, { limit: 1 });
    expect(JSON.stringify(audit.rows)).not.toContain(secret);

    // Export, edit, put back: "[stored]" keeps the secret.
    const roundTrip = withModel(exported.body.document as Document, '2', '4');
    expect((await put(roundTrip)).status).toBe(200);
    expect(await billedFor(harness)).toBe(costAt(2, 4));
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${secret}`);
    // The other instance opens it with the same key.
    await waitFor(async () => (await otherCall('GET', '/catalog/document', tokens.viewer)).body.version === version + 1, 3_000);
    expect(await billedFor(other)).toBe(costAt(2, 4));
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${secret}`);

    // Rotation: a new value is a new version.
    expect((await put(withSecret('sk-rotated'))).status).toBe(200);
    await billedFor(harness);
    expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer sk-rotated');

    // "[stored]" for a provider without a stored secret is refused.
    const unknownStored = withModel(seeded, '1', '4');
    unknownStored.providers = [...unknownStored.providers, { name: 'upstream-2', type: 'openai', base_url: upstream.baseUrl, api_key: '[stored]' }];
    const refused = await put(unknownStored);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ param: `providers[${unknownStored.providers.length - 1}].api_key` });
  });
});

describe('the catalog at runtime, refused', () => {
  it('answers 409 to changes in file mode, and exports the file', async () => {
    const catalog = { ...(testCatalog() as Record<string, unknown>), catalog: { source: 'file' } };
    const harness = await startHarness({ catalog, env: ENV });
    try {
      const operator = (await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR)).secret;
      const call = adminClient(harness.baseUrl);
      const exported = await call('GET', '/catalog/document', operator);
      expect(exported.body).toMatchObject({ version: null, source: 'file' });
      const refused = await call('PUT', '/catalog/document', operator, { document: exported.body.document });
      expect(refused.status).toBe(409);
      expect((refused.body.error as { message: string }).message).toContain('managed as code');
      expect((await call('POST', '/catalog/versions/1/rollback', operator)).status).toBe(409);
      expect(await harness.store.latestCatalogVersionId()).toBeNull();
    } finally {
      await harness.close();
    }
  });

  it('answers 409 to a secret when TOLLGATE_SECRETS_KEY is unset', async () => {
    const harness = await startHarness({ catalog: testCatalog({ upstreamBaseUrl: 'http://127.0.0.1:9/v1' }), env: { TEST_UPSTREAM_KEY: 'k' } });
    try {
      const operator = (await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR)).secret;
      const call = adminClient(harness.baseUrl);
      const document = (await call('GET', '/catalog/document', operator)).body.document as Document;
      document.providers = document.providers.map((provider) => (provider.name === 'upstream' ? { name: 'upstream', type: 'openai', base_url: provider.base_url, api_key: 'sk-x' } : provider));
      const refused = await call('PUT', '/catalog/document', operator, { document });
      expect(refused.status).toBe(409);
      expect((refused.body.error as { message: string }).message).toContain('TOLLGATE_SECRETS_KEY is not set');
      expect(await harness.store.latestCatalogVersionId()).toBe(1);
    } finally {
      await harness.close();
    }
  });
});
