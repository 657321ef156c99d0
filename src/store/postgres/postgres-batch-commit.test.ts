/**
 * How a PostgreSQL batch commits (postgres-flush.ts, `batchCommit`), on PostgreSQL (when
 * TOLLGATE_TEST_POSTGRES_URL is set): a batch that started from an idle queue commits durably in
 * its own statement and asks for no flush; one formed while another ran commits without waiting
 * and is made durable by a flush; the pipelined queue under concurrent load takes both paths and
 * every operation gets its own outcome. That the durable commit really is on disk
 * is shown by the crash tests (test/e2e/postgres-durability.test.ts serves one answer at a time,
 * test/e2e/postgres-durability-concurrent.test.ts many at once).
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useMigratedPostgres } from '../../../test/support/batch-equivalence.js';
import { postgresUrl } from '../../../test/support/databases.js';
import { openOperation, settleOperation, type HoldOperation } from '../hold-operations.js';
import { PipelinedGroupCommit } from '../pipelined-group-commit.js';
import type { Database } from '../schema.js';
import { createDurableFlush, type DurableFlush } from './postgres-flush.js';
import { createPostgresPipelinedHoldBatchCommit } from './postgres-hold-batch.js';

const ACCOUNT = 'acct_commit';
const KEY = 'key_commit';
let sequence = 0;

function open(): HoldOperation {
  sequence += 1;
  return openOperation({ id: `hold_commit_${sequence}`, accountId: ACCOUNT, keyId: KEY, requestId: `req_${sequence}`, model: 'm', amountNanos: 1_000n, expiresAt: new Date(Date.now() + 60_000) }, new Date());
}

describe.skipIf(postgresUrl === undefined)('PostgreSQL hold batches: durable on their own when no flush runs', () => {
  const database = useMigratedPostgres();
  let db: Kysely<Database>;
  /** The real flush, counted. */
  let flushes = 0;
  let flush: DurableFlush;

  beforeAll(async () => {
    await database.client().query('insert into accounts (id, name, balance_nanos, reserved_nanos, disabled, created_at) values ($1, $1, 1000000000, 0, 0, 0)', [ACCOUNT]);
    await database.client().query('insert into api_keys (id, account_id, prefix, hash, created_at) values ($1, $2, $1, $1, 0)', [KEY, ACCOUNT]);
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url() }) }) });
    const real = createDurableFlush(db);
    flush = () => {
      flushes += 1;
      return real();
    };
  });
  afterAll(() => db?.destroy());

  const heldNanos = async () => (await database.client().query<{ reserved: string }>('select reserved_nanos::text as reserved from accounts where id = $1', [ACCOUNT])).rows[0]!.reserved;

  it('commits a batch from an idle queue in its own statement, and flushes one under load', async () => {
    const commit = createPostgresPipelinedHoldBatchCommit(db, flush);
    flushes = 0;
    for (let index = 0; index < 5; index++) {
      const { outcomes, durable } = await commit([open()], false);
      await durable;
      expect(outcomes).toEqual([{ ok: true, value: true }]);
    }
    expect(flushes).toBe(0);
    expect(await heldNanos()).toBe('5000');

    const settle = settleOperation(`hold_commit_${sequence}`, null, new Date());
    const { outcomes, durable } = await commit([open(), settle], true);
    expect(flushes).toBe(1);
    await durable;
    expect(outcomes).toEqual([
      { ok: true, value: true },
      { ok: true, value: true },
    ]);
    expect(await heldNanos()).toBe('5000');
  });

  it('takes both paths under concurrent load, each operation with its own outcome', async () => {
    const queue = new PipelinedGroupCommit<HoldOperation, boolean>({ commit: createPostgresPipelinedHoldBatchCommit(db, flush), maxBatchSize: 4 });
    const before = BigInt(await heldNanos());
    flushes = 0;
    const results = await Promise.all(Array.from({ length: 40 }, () => queue.submit(open())));
    expect(results).toEqual(Array.from({ length: 40 }, () => true));
    // Ten batches of four, one after another: the first starts from an idle queue, the rest waited behind it.
    expect(flushes).toBe(9);
    expect(BigInt(await heldNanos()) - before).toBe(40_000n);
    await queue.close();
  });
});
