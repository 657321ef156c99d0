/**
 * Quota slices through the real gateway (docs/architecture.md, Money: "Quota slices"), on SQLite
 * always and on PostgreSQL when TOLLGATE_TEST_POSTGRES_URL is set: `billing.slices.enabled: auto`
 * turns them on with PostgreSQL only; on, a busy account (two requests at once) gets a slice and its
 * next requests are admitted from it (`tollgate_holds_admitted_total{path="slice"}`), each billed once, and the drain
 * gives the slice back; off, every hold takes its own write. A key with a budget never uses one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { sampleSum } from '../support/prometheus.js';
import { waitFor } from '../support/wait-for.js';

const ASK = { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'slice me' }], max_tokens: 20 };
/** Slow enough that two at once overlap. */
const SLOW = { ...ASK, model: 'slow-model' };

function catalogWith(slices: Record<string, unknown>): unknown {
  return { ...(testCatalog() as Record<string, unknown>), billing: { hold_ttl_seconds: 60, checkpoint_seconds: 2, slices } };
}

describe.each(engines)('quota slices in the gateway on %s', (engine) => {
  let harness: Harness | undefined;

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  async function admitted(path: 'slice' | 'exact'): Promise<number> {
    return sampleSum(await (await fetch(`${harness!.baseUrl}/metrics`)).text(), 'tollgate_holds_admitted_total', { path });
  }

  /** Two requests at once on one account (a busy one), then, its slice granted when one is, three one after the other; their charges. */
  async function askFive(accountId: string, secret: string, slice: boolean) {
    const ask = async (body: object = ASK) => {
      const answer = await harness!.post('/v1/chat/completions', body, secret);
      expect(answer.status).toBe(200);
      await answer.text();
    };
    await Promise.all([ask(SLOW), ask(SLOW)]);
    if (slice) await waitFor(async () => (await harness!.store.listSlices(accountId)).length === 1);
    for (let index = 0; index < 3; index += 1) await ask();
    await waitFor(async () => (await harness!.store.countOpenHolds(accountId)) === 0);
    return (await harness!.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
  }

  it(`with enabled: auto, ${engine === 'postgres' ? 'admits from a slice once the account is busy, bills each once and gives the slice back at the drain' : 'takes the exact path for every hold'}`, async () => {
    harness = await startHarness({ engine, catalog: catalogWith({ enabled: 'auto', size_usd: '0.01', headroom: 4 }) });
    const { accountId, secret } = await harness.newAccount('10');
    const charges = await askFive(accountId, secret, engine === 'postgres');
    expect(charges).toHaveLength(5);
    if (engine === 'postgres') {
      expect(await admitted('slice')).toBe(3);
      expect(await admitted('exact')).toBe(2);
      expect((await harness.store.listSlices(accountId)).map((slice) => slice.state)).toEqual(['active']);
      await harness.gateway.close();
      expect(await harness.store.listSlices(accountId)).toEqual([]);
    } else {
      expect(await admitted('slice')).toBe(0);
      expect(await harness.store.listSlices(accountId)).toEqual([]);
    }
  });

  it('with enabled: true on either engine, admits from a slice; with false, never', async () => {
    harness = await startHarness({ engine, catalog: catalogWith({ enabled: true, size_usd: '0.01', headroom: 4 }) });
    const on = await harness.newAccount('10');
    expect(await askFive(on.accountId, on.secret, true)).toHaveLength(5);
    expect(await admitted('slice')).toBe(3);
    // A key with a budget takes the exact path.
    const budgeted = await harness.newAccount('10', { budget: { limitUsd: '1', period: 'day' } });
    expect(await askFive(budgeted.accountId, budgeted.secret, false)).toHaveLength(5);
    expect(await admitted('slice')).toBe(3);
    await harness.close();

    harness = await startHarness({ engine, catalog: catalogWith({ enabled: false }) });
    const off = await harness.newAccount('10');
    expect(await askFive(off.accountId, off.secret, false)).toHaveLength(5);
    expect(await admitted('slice')).toBe(0);
    expect(await admitted('exact')).toBe(5);
  });
});
