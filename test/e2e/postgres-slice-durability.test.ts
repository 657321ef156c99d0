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
import { crashAfterServing, startGatewayOnOwnPostgres, type GatewayOnOwnPostgres } from '../support/postgres-crash.js';
import { rawRows } from '../support/raw-rows.js';
import { throwawayPostgresMissing } from '../support/throwaway-postgres.js';
import { waitFor } from '../support/wait-for.js';

const ANSWERS = 8;
const OPENING_USD = '1';

const missing = throwawayPostgresMissing();

describe.skipIf(missing !== null)('an answer admitted from a quota slice is billed before its last byte, through a PostgreSQL crash', () => {
  let gateway: GatewayOnOwnPostgres | undefined;

  beforeAll(async () => {
    gateway = await startGatewayOnOwnPostgres({ billing: { slices: { enabled: true, size_usd: '0.1', headroom: 2 } } });
  }, 60_000);

  afterAll(() => gateway?.close(), 30_000);

  it('finds every charge, each hold settled out of the slice, after the server is killed with its WAL writer paused', async () => {
    const { harness } = gateway!;
    const { accountId, secret } = await harness.newAccount(OPENING_USD);
    const ask = async (model: string, stream: boolean) => {
      const response = await harness.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Billed if the database dies?' }], max_tokens: 20, stream }, secret);
      const text = await response.text();
      expect(response.status, text).toBe(200);
      return response.headers.get('x-request-id')!;
    };
    // Busy: two at once (slow enough to overlap) take the exact path and ask for a slice.
    await Promise.all([ask('slow-model', false), ask('slow-model', false)]);
    await waitFor(async () => (await harness.store.listSlices(accountId)).length === 1);

    const serve = async () => {
      const served: string[] = [];
      for (let index = 0; index < ANSWERS; index++) served.push(await ask('model-5.6-mini', index % 2 === 1));
      return served;
    };
    await crashAfterServing(gateway!, { accountId, openingUsd: OPENING_USD }, serve, async (served, { store, charges }) => {
      expect(served.every((requestId) => charges.some((charge) => charge.requestId === requestId))).toBe(true);
      // Each was admitted from the slice and settled out of it.
      const rows = await rawRows(harness.database, 'SELECT request_id, state, slice_id FROM holds WHERE account_id = ? AND request_id = ANY(?)', [accountId, served]);
      expect(rows.map((row) => [row.state, row.slice_id !== null])).toEqual(served.map(() => ['settled', true]));
      // What stays reserved is what the slice still holds, as before the crash.
      const [slice] = await store.listSlices(accountId);
      const [account] = await rawRows(harness.database, 'SELECT reserved_nanos, sliced_nanos FROM accounts WHERE id = ?', [accountId]);
      expect(account).toEqual({ reserved_nanos: slice!.amountNanos, sliced_nanos: slice!.amountNanos });
    });
  }, 60_000);
});
