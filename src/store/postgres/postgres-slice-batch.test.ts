/**
 * Migration 0015's set-based hold batch against its operation-by-operation one, on PostgreSQL
 * (when TOLLGATE_TEST_POSTGRES_URL is set), for settles of holds admitted from quota slices: random
 * batches of opens and settles, each settle naming a slice or not, run by each function on the same
 * state (a savepoint rolled back in between), must give the same outcomes and leave the same
 * accounts (reserved and sliced amounts too), holds, ledger and slices, or fail alike. The cases
 * mix what the slice branch decides on: a hold with no row (settled out of its slice), with an open
 * row (settled as any hold), with a settled row (a retry), the same hold twice in a batch, a slice
 * that is gone, of another account, or too small, opens that the slices leave no room for, and
 * a write that fails (an unknown key).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { expectBatchFunctionsAgree, useMigratedPostgresClient } from '../../../test/support/batch-equivalence.js';
import { postgresUrl } from '../../../test/support/databases.js';

const CASES = 200;

interface Seeded {
  accounts: string[];
  keys: Array<{ id: string; accountId: string }>;
  slices: Array<{ id: string; accountId: string }>;
  /** Holds with a row (open or settled), admitted from a slice. */
  rows: Array<{ id: string; sliceId: string; accountId: string; keyId: string }>;
}

async function seed(client: pg.Client, next: () => number): Promise<Seeded> {
  const tag = randomUUID().slice(0, 8);
  const accounts = ['a', 'b'].map((name) => `acct_${tag}_${name}`);
  const keys = accounts.map((accountId, index) => ({ id: `key_${tag}_${index}`, accountId }));
  const slices: Seeded['slices'] = [];
  for (const [index, accountId] of accounts.entries()) {
    const sliceAmounts = [100 + Math.floor(next() * 300), 20 + Math.floor(next() * 80)];
    const sliced = sliceAmounts.reduce((sum, amount) => sum + amount, 0);
    await client.query('insert into accounts (id, name, balance_nanos, reserved_nanos, sliced_nanos, disabled, created_at) values ($1, $1, $2, $3, $3, 0, 0)', [accountId, sliced + 50 + Math.floor(next() * 200), sliced]);
    await client.query('insert into api_keys (id, account_id, prefix, hash, created_at) values ($1, $2, $1, $1, 0)', [keys[index]!.id, accountId]);
    for (const [piece, amount] of sliceAmounts.entries()) {
      const id = `slice_${tag}_${index}_${piece}`;
      await client.query("insert into account_slices (id, account_id, owner, amount_nanos, state, lease_until, created_at) values ($1, $2, 'owner', $3, 'active', 0, 0)", [id, accountId, amount]);
      slices.push({ id, accountId });
    }
  }
  // Holds already moved out of their slices into rows: one open (checkpointed), one settled.
  const rows: Seeded['rows'] = [];
  for (const [index, state] of ['open', 'settled'].entries()) {
    const slice = slices[index * 2]!;
    const key = keys.find((each) => each.accountId === slice.accountId)!;
    const id = `hold_${tag}_${state}`;
    const amount = 10 + Math.floor(next() * 40);
    await client.query(
      `insert into holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, surface, slice_id)
       values ($1, $2, $3, $1, 'm', $4, $5, 0, 0, 'responses', $6)`,
      [id, slice.accountId, key.id, amount, state, slice.id],
    );
    if (state === 'open') await client.query('update accounts set reserved_nanos = reserved_nanos + $2 where id = $1', [slice.accountId, amount]);
    rows.push({ id, sliceId: slice.id, accountId: slice.accountId, keyId: key.id });
  }
  return { accounts, keys, slices, rows };
}

function batch(seeded: Seeded, next: () => number): unknown[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const operations: unknown[] = [];
  const fresh: string[] = [];
  const count = 1 + Math.floor(next() * 10);
  for (let index = 0; index < count; index++) {
    const roll = next();
    if (roll < 0.25) {
      const key = next() < 0.05 ? { id: 'no-such-key', accountId: seeded.accounts[0]! } : pick(seeded.keys);
      operations.push({ kind: 'open', id: `hold_${randomUUID()}`, account_id: key.accountId, key_id: key.id, request_id: `req_${index}`, model: 'm', amount_nanos: String(Math.floor(next() * 300)), expires_at: 1_000, created_at: 2_000 + index });
      continue;
    }
    const row = next() < 0.3 ? pick(seeded.rows) : undefined;
    const slice = row === undefined ? pick(seeded.slices) : seeded.slices.find((each) => each.id === row.sliceId)!;
    const holdId = row?.id ?? (fresh.length > 0 && next() < 0.15 ? pick(fresh) : `hold_${randomUUID()}`);
    fresh.push(holdId);
    const accountId = next() < 0.08 ? pick(seeded.accounts) : slice.accountId;
    const key = seeded.keys.find((each) => each.accountId === accountId)!;
    const sliceId = next() < 0.05 ? 'slice_gone' : slice.id;
    const charged = next() < 0.8;
    operations.push({
      kind: 'settle',
      hold_id: holdId,
      created_at: 3_000 + index,
      ...(next() < 0.9 && {
        slice: { slice_id: sliceId, account_id: accountId, key_id: key.id, request_id: `req_${index}`, model: 'm', amount_nanos: String(1 + Math.floor(next() * 150)), admitted_at: 500 + index, ...(next() < 0.8 && { surface: 'chat-completions' }) },
      }),
      ...(charged && {
        charge: { request_id: `req_${index}`, key_id: key.id, model: 'm', cost_nanos: String(Math.floor(next() * 10)), excess_nanos: String(next() < 0.3 ? 5 : 0), input_tokens: 7, cached_input_tokens: 1, cache_write_input_tokens: 2, output_tokens: 3, reasoning_tokens: 4 },
        excess_note: 'beyond the hold',
      }),
    });
  }
  return operations;
}

/** The rows a batch may change: the accounts' reserved and sliced amounts, holds, ledger and slices. */
async function readState(client: pg.Client, seeded: Seeded): Promise<unknown> {
  return {
    accounts: (await client.query('select id, balance_nanos, reserved_nanos, sliced_nanos from accounts where id = any($1) order by id', [seeded.accounts])).rows,
    holds: (await client.query('select id, account_id, key_id, request_id, amount_nanos, state, expires_at, created_at, surface, slice_id from holds where account_id = any($1) order by id', [seeded.accounts])).rows,
    ledger: (await client.query('select account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, output_tokens, note, created_at, surface from ledger where account_id = any($1) order by id', [seeded.accounts])).rows,
    slices: (await client.query('select id, account_id, amount_nanos, state from account_slices where account_id = any($1) order by id', [seeded.accounts])).rows,
  };
}

describe.skipIf(postgresUrl === undefined)('PostgreSQL hold batches settling from quota slices (migration 0015)', () => {
  const client = useMigratedPostgresClient();

  it(`decides ${CASES} random batches alike in the set-based and the operation-by-operation function`, async () => {
    const seen = { slicedSettles: 0, failures: 0 };
    await expectBatchFunctionsAgree(client(), {
      cases: CASES,
      seed,
      batch,
      readState,
      agreed: (result, seeded) => {
        if ('error' in result) seen.failures += 1;
        else seen.slicedSettles += (result.state as { holds: Array<{ slice_id: unknown; id: string }> }).holds.filter((hold) => hold.slice_id !== null && !seeded.rows.some((row) => row.id === hold.id)).length;
      },
    });
    // The cases reach the slice branch, and some carry a write that fails (an unknown key) in both.
    expect(seen.slicedSettles).toBeGreaterThan(50);
    expect(seen.failures).toBeGreaterThan(0);
  }, 60_000);
});
