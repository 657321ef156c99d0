/**
 * A complete answer admitted from a quota slice was billed before its last byte, even if
 * PostgreSQL crashes right after it (docs/architecture.md, Money: "Quota slices" and "Durability"):
 * its settlement, which writes its hold's row and takes its amount out of the slice, goes through
 * the same pipelined batch and flush as any settlement. On a cluster of its own
 * (test/support/throwaway-postgres.ts) with the WAL writer paused, an account made busy (two
 * requests at once) gets a slice; answers admitted from it are read to their last byte, the
 * server is killed and started again, and every charge is there, each hold's row names the slice,
 * and the account's reserved amount is still what its slice holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/billing/money.js';
import { openStore } from '../../src/store/open-store.js';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';
import { rawRows } from '../support/raw-rows.js';
import { startThrowawayCluster, throwawayPostgresMissing, type ThrowawayCluster } from '../support/throwaway-postgres.js';
import { waitFor } from '../support/wait-for.js';

const ANSWERS = 8;
const OPENING_USD = '1';

const missing = throwawayPostgresMissing();

describe.skipIf(missing !== null)('an answer admitted from a quota slice is billed before its last byte, through a PostgreSQL crash', () => {
  let cluster: ThrowawayCluster | undefined;
  let harness: Harness | undefined;

  beforeAll(async () => {
    cluster = await startThrowawayCluster();
    const catalog = { ...(testCatalog() as Record<string, unknown>), log: { enabled: false }, billing: { slices: { enabled: true, size_usd: '0.1', headroom: 2 } } };
    harness = await startHarness({ catalog, sharedDatabase: { engine: 'postgres', url: cluster.url, drop: async () => undefined } });
  }, 60_000);

  afterAll(async () => {
    try {
      await harness?.close();
    } finally {
      cluster?.destroy();
    }
  }, 30_000);

  it('finds every charge, each hold settled out of the slice, after the server is killed with its WAL writer paused', async () => {
    const gateway = harness!;
    const server = cluster!;
    const { accountId, secret } = await gateway.newAccount(OPENING_USD);
    const ask = async (model: string, stream: boolean) => {
      const response = await gateway.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Billed if the database dies?' }], max_tokens: 20, stream }, secret);
      const text = await response.text();
      expect(response.status, text).toBe(200);
      return response.headers.get('x-request-id')!;
    };
    // Busy: two at once (slow enough to overlap) take the exact path and ask for a slice.
    await Promise.all([ask('slow-model', false), ask('slow-model', false)]);
    await waitFor(async () => (await gateway.store.listSlices(accountId)).length === 1);

    server.pauseWalWriter();
    const served: string[] = [];
    for (let index = 0; index < ANSWERS; index++) served.push(await ask('model-5.6-mini', index % 2 === 1));
    const acknowledged = (await gateway.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    await server.kill();

    server.start();
    const store = await openStore(server.url, { migrate: false });
    try {
      const charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
      expect(charges).toEqual(acknowledged);
      expect(served.every((requestId) => charges.some((charge) => charge.requestId === requestId))).toBe(true);
      const charged = charges.reduce((sum, charge) => sum + charge.amountNanos, 0n);
      expect((await store.findAccount(accountId))!.balanceNanos).toBe(usdToNanos(OPENING_USD) - charged);
      // Each was admitted from the slice and settled out of it.
      const rows = await rawRows({ engine: 'postgres', url: server.url, drop: async () => undefined }, 'SELECT request_id, state, slice_id FROM holds WHERE account_id = ? AND request_id = ANY(?)', [accountId, served]);
      expect(rows.map((row) => [row.state, row.slice_id !== null])).toEqual(served.map(() => ['settled', true]));
      // What stays reserved is what the slice still holds, as before the crash.
      const [slice] = await store.listSlices(accountId);
      const [account] = await rawRows({ engine: 'postgres', url: server.url, drop: async () => undefined }, 'SELECT reserved_nanos, sliced_nanos FROM accounts WHERE id = ?', [accountId]);
      expect(account).toEqual({ reserved_nanos: slice!.amountNanos, sliced_nanos: slice!.amountNanos });
    } finally {
      await store.close();
    }
  }, 60_000);
});
