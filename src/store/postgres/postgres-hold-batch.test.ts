/**
 * Migration 0011's set-based hold batch against 0008's operation-by-operation one (both as
 * migration 0012 replaced them, with the hold's surface), on PostgreSQL (when
 * TOLLGATE_TEST_POSTGRES_URL is set): random batches of opens and settles, run by each
 * function on the same state (a savepoint rolled back in between), must give the same outcomes
 * and leave the same accounts, holds, ledger and key spend, or fail alike. The cases mix what the
 * guards decide on: balances that run out within the batch, settles that free room for a later
 * open, disabled and unknown accounts, key budgets, holds already settled or expired, a hold
 * settled twice, charges with and without an excess, holds with and without a surface, and a
 * write that fails (an unknown key).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { expectBatchFunctionsAgree, useMigratedPostgresClient } from '../../../test/support/batch-equivalence.js';
import { postgresUrl } from '../../../test/support/databases.js';

const CASES = 300;
const DAY_START = 1_700_000_000_000;
/** What a hold may be opened for; null as before migration 0012. */
const SURFACES = ['responses', 'chat-completions', 'anthropic-messages', 'embeddings', null] as const;

interface Seeded {
  accounts: string[];
  keys: Array<{ id: string; accountId: string; budget: boolean }>;
  holds: string[];
}

async function seed(client: pg.Client, next: () => number): Promise<Seeded> {
  const tag = randomUUID().slice(0, 8);
  const accounts = ['a', 'b', 'c'].map((name) => `acct_${tag}_${name}`);
  const balances = [1_000 + Math.floor(next() * 500), 40 + Math.floor(next() * 100), 500];
  for (const [index, id] of accounts.entries()) {
    await client.query('insert into accounts (id, name, balance_nanos, reserved_nanos, disabled, created_at) values ($1, $1, $2, 0, $3, 0)', [id, balances[index], index === 2 ? 1 : 0]);
  }
  const keys = [
    { id: `key_${tag}_plain`, accountId: accounts[0]!, budget: false },
    { id: `key_${tag}_budget`, accountId: accounts[0]!, budget: true },
    { id: `key_${tag}_small`, accountId: accounts[1]!, budget: false },
  ];
  for (const key of keys) {
    await client.query('insert into api_keys (id, account_id, prefix, hash, created_at, budget_nanos, budget_period) values ($1, $2, $1, $1, 0, $3, $4)', [
      key.id,
      key.accountId,
      key.budget ? 200 + Math.floor(next() * 300) : null,
      key.budget ? 'day' : null,
    ]);
  }
  // Open holds to settle (their reservations made as an open would), plus one settled and one expired.
  const holds: string[] = [];
  for (let index = 0; index < 6; index++) {
    const key = keys[index % keys.length]!;
    const amount = 10 + Math.floor(next() * 60);
    const id = `hold_${tag}_${index}`;
    const state = index === 4 ? 'settled' : index === 5 ? 'expired' : 'open';
    await client.query(
      `insert into holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, budget_period, budget_period_start, surface)
       values ($1, $2, $3, $1, 'm', $4, $5, 0, 0, $6, $7, $8)`,
      [id, key.accountId, key.id, amount, state, key.budget ? 'day' : null, key.budget ? DAY_START : null, SURFACES[index % SURFACES.length]],
    );
    if (state === 'open') {
      await client.query('update accounts set reserved_nanos = reserved_nanos + $2 where id = $1', [key.accountId, amount]);
      if (key.budget) {
        await client.query(
          `insert into key_spend (key_id, period, period_start, spent_nanos, reserved_nanos) values ($1, 'day', $2, 0, $3)
           on conflict (key_id, period, period_start) do update set reserved_nanos = key_spend.reserved_nanos + excluded.reserved_nanos`,
          [key.id, DAY_START, amount],
        );
      }
    }
    holds.push(id);
  }
  return { accounts, keys, holds };
}

function batch(seeded: Seeded, next: () => number): unknown[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const operations: unknown[] = [];
  const count = 1 + Math.floor(next() * 12);
  for (let index = 0; index < count; index++) {
    if (next() < 0.5) {
      const key = next() < 0.03 ? { id: 'no-such-key', accountId: seeded.accounts[0]!, budget: false } : pick(seeded.keys);
      const accountId = next() < 0.1 ? pick([...seeded.accounts, 'no-such-account']) : key.accountId;
      const surface = pick(SURFACES);
      operations.push({
        kind: 'open',
        id: `hold_${randomUUID()}`,
        account_id: accountId,
        key_id: key.id,
        request_id: `req_${index}`,
        model: 'm',
        amount_nanos: String(Math.floor(next() * 400)),
        expires_at: 1_000 + index,
        created_at: 2_000 + index,
        ...(key.budget && { budget_period: 'day', budget_period_start: DAY_START }),
        ...(surface !== null && { surface }),
      });
    } else {
      const holdId = next() < 0.1 ? 'hold_unknown' : pick(seeded.holds);
      const charged = next() < 0.8;
      operations.push({
        kind: 'settle',
        hold_id: holdId,
        created_at: 3_000 + index,
        ...(charged && {
          charge: {
            request_id: `req_${index}`,
            key_id: pick(seeded.keys).id,
            model: 'm',
            cost_nanos: String(Math.floor(next() * 10)),
            excess_nanos: String(next() < 0.3 ? 1 + Math.floor(next() * 50) : 0),
            input_tokens: 7,
            cached_input_tokens: 1,
            cache_write_input_tokens: 2,
            output_tokens: 3,
            reasoning_tokens: 4,
          },
          excess_note: 'beyond the hold',
        }),
      });
    }
  }
  return operations;
}

/** The rows a batch may change: accounts, holds, ledger and key spend. */
async function readState(client: pg.Client, seeded: Seeded): Promise<unknown> {
  const keyIds = seeded.keys.map((key) => key.id);
  return {
    accounts: (await client.query('select id, balance_nanos, reserved_nanos from accounts where id = any($1) order by id', [seeded.accounts])).rows,
    holds: (await client.query('select id, account_id, key_id, amount_nanos, state, expires_at, created_at, budget_period, budget_period_start, surface from holds where account_id = any($1) order by id', [seeded.accounts])).rows,
    ledger: (await client.query('select account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_tokens, note, created_at, surface from ledger where account_id = any($1) order by id', [seeded.accounts])).rows,
    keySpend: (await client.query('select key_id, period, period_start, spent_nanos, reserved_nanos from key_spend where key_id = any($1) order by key_id', [keyIds])).rows,
  };
}

describe.skipIf(postgresUrl === undefined)('PostgreSQL set-based hold batch (migration 0011)', () => {
  const client = useMigratedPostgresClient();

  it(`decides ${CASES} random batches exactly as migration 0008's function does`, async () => {
    let fastPathFailures = 0;
    await expectBatchFunctionsAgree(client(), {
      cases: CASES,
      seed,
      batch,
      readState,
      agreed: (result) => {
        if ('error' in result) fastPathFailures += 1;
      },
    });
    // Some batches carry a write that fails (an unknown key), and fail alike in both.
    expect(fastPathFailures).toBeGreaterThan(0);
  }, 60_000);
});
