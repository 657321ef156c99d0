/**
 * A stream that lasts longer than the hold's time to live is still billed, exactly once: the
 * hold of a running request is kept alive, and only a dead process lets one expire.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

describe.each(engines)('streams longer than the hold TTL on %s', (engine) => {
  let harness: Harness;

  beforeAll(async () => {
    const base = testCatalog() as { providers: unknown[]; models: unknown[] };
    const catalog = {
      ...base,
      providers: [...base.providers, { name: 'sim-crawl', type: 'simulated', pace_ms: 200 }],
      models: [...base.models, { id: 'crawl-model', prices: { input: '1', output: '4' }, max_output_tokens: 512, targets: [{ provider: 'sim-crawl', model: 'crawl-model' }] }],
      billing: { hold_ttl_seconds: 1 },
    };
    harness = await startHarness({ engine, catalog });
  });
  afterAll(async () => harness?.close());

  it('a 3-second stream under a 1-second hold TTL is billed once, and no hold is left', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const started = Date.now();
    const response = await harness.post('/v1/chat/completions', { model: 'crawl-model', stream: true, messages: [{ role: 'user', content: 'tell me a long story' }] }, secret);
    const text = await response.text();
    expect(Date.now() - started).toBeGreaterThan(2000);
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    const requestId = response.headers.get('x-request-id');
    await expect.poll(() => harness.store.countOpenHolds(accountId)).toBe(0);
    const charges = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({ requestId });
    expect(charges[0]!.outputTokens).toBeGreaterThan(10);
    const account = (await harness.store.findAccount(accountId))!;
    expect(account.reservedNanos).toBe(0n);
  });
});
