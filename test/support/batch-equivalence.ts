/**
 * PostgreSQL's two hold-batch functions held to each other (migrations 0011 and 0015): on a fresh
 * migrated database, each case seeds rows from its own deterministic generator (so a failing case
 * can be replayed from its seed), builds a random batch, and runs it through the set-based
 * function and through the operation-by-operation one on the same state (a savepoint rolled back
 * in between): both must give the same outcomes and leave the same state, or fail alike. Every
 * case runs in a transaction rolled back afterwards.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { createRandom } from '../../src/providers/simulated/deterministic-random.js';
import { openStore } from '../../src/store/open-store.js';
import { createTestDatabase, type TestDatabase } from './databases.js';

/** What one function did with a batch: its outcomes and the state it left, or the error code it failed with. */
export type BatchResult = { outcomes: unknown; state: unknown } | { error: string };

export interface BatchCases<Seeded> {
  cases: number;
  /** Inserts the rows a case's batch works on. */
  seed(client: pg.Client, next: () => number): Promise<Seeded>;
  batch(seeded: Seeded, next: () => number): unknown[];
  /** The rows the batch may have changed, in a stable order. */
  readState(client: pg.Client, seeded: Seeded): Promise<unknown>;
  /** Told of each case once both functions agreed on it, to count what the cases reached. */
  agreed?(result: BatchResult, seeded: Seeded): void;
}

/** A client on a fresh migrated PostgreSQL database for the suite (the describe that calls this). */
export function useMigratedPostgresClient(): () => pg.Client {
  return useMigratedPostgres().client;
}

/** A fresh migrated PostgreSQL database for the suite: its URL, and a client connected to it. */
export function useMigratedPostgres(): { client: () => pg.Client; url: () => string } {
  let database: TestDatabase | undefined;
  let client: pg.Client | undefined;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    await (await openStore(database.url)).close();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });
  return {
    client: () => {
      if (client === undefined) throw new Error('the PostgreSQL client is not connected yet');
      return client;
    },
    url: () => {
      if (database === undefined) throw new Error('the PostgreSQL database is not created yet');
      return database.url;
    },
  };
}

async function run(client: pg.Client, fn: string, operations: unknown[], readState: () => Promise<unknown>): Promise<BatchResult> {
  await client.query('savepoint attempt');
  try {
    const { rows } = await client.query(`select ${fn}($1::jsonb, false) as outcomes`, [JSON.stringify(operations)]);
    return { outcomes: rows[0]?.outcomes, state: await readState() };
  } catch (error) {
    return { error: String((error as { code?: unknown }).code) };
  } finally {
    await client.query('rollback to savepoint attempt');
  }
}

/** Runs `cases` seeds 1..cases through both functions and expects each to agree. */
export async function expectBatchFunctionsAgree<Seeded>(client: pg.Client, cases: BatchCases<Seeded>): Promise<void> {
  for (let seedValue = 1; seedValue <= cases.cases; seedValue++) {
    const next = createRandom(seedValue);
    await client.query('begin');
    try {
      const seeded = await cases.seed(client, next);
      const operations = cases.batch(seeded, next);
      const readState = () => cases.readState(client, seeded);
      const setBased = await run(client, 'tollgate_apply_hold_operations', operations, readState);
      const inTurn = await run(client, 'tollgate_apply_hold_operations_in_turn', operations, readState);
      expect({ seed: seedValue, ...setBased }).toEqual({ seed: seedValue, ...inTurn });
      cases.agreed?.(setBased, seeded);
    } finally {
      await client.query('rollback');
    }
  }
}
