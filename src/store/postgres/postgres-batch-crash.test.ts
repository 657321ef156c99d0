/**
 * Both ways a PostgreSQL hold batch becomes durable (postgres-flush.ts, `batchCommit`) survive a
 * crash of the server, and a batch that committed without waiting and was never flushed does not:
 * on a cluster of the test's own (test/support/throwaway-postgres.ts) with the WAL writer paused,
 * so that nothing but the batches' own commits writes the log out. A batch under load commits
 * without waiting and is made durable by the flush; a batch from an idle queue commits durably in
 * its own statement; a last batch committed without waiting, whose flush is never asked for, shows
 * that the crash really takes back what was not flushed (without it, the test could not fail).
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawayCluster, throwawayPostgresMissing, type ThrowawayCluster } from '../../../test/support/throwaway-postgres.js';
import { openOperation, type HoldOperation } from '../hold-operations.js';
import { openStore } from '../open-store.js';
import type { Database } from '../schema.js';
import { createDurableFlush } from './postgres-flush.js';
import { createPostgresPipelinedHoldBatchCommit } from './postgres-hold-batch.js';

const ACCOUNT = 'acct_crash';
const KEY = 'key_crash';

function open(id: string): HoldOperation {
  return openOperation({ id, accountId: ACCOUNT, keyId: KEY, requestId: `req_${id}`, model: 'm', amountNanos: 1_000n, expiresAt: new Date(Date.now() + 600_000) }, new Date());
}

const missing = throwawayPostgresMissing();

describe.skipIf(missing !== null)('PostgreSQL hold batches through a crash of the server', () => {
  let cluster: ThrowawayCluster | undefined;

  beforeAll(async () => {
    cluster = await startThrowawayCluster();
    await (await openStore(cluster.url)).close();
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    await client.query('insert into accounts (id, name, balance_nanos, reserved_nanos, disabled, created_at) values ($1, $1, 1000000000, 0, 0, 0)', [ACCOUNT]);
    await client.query('insert into api_keys (id, account_id, prefix, hash, created_at) values ($1, $2, $1, $1, 0)', [KEY, ACCOUNT]);
    await client.query('checkpoint');
    await client.end();
  }, 60_000);

  afterAll(() => cluster?.destroy());

  it('keeps the flushed batch and the one committed durably, and loses the one never flushed', async () => {
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: cluster!.url }) }) });
    const commit = createPostgresPipelinedHoldBatchCommit(db, createDurableFlush(db));
    const unflushed = createPostgresPipelinedHoldBatchCommit(db, async () => undefined);
    cluster!.pauseWalWriter();
    try {
      const flushed = await commit([open('hold_flushed')], true);
      await flushed.durable;
      const durably = await commit([open('hold_durably')], false);
      await durably.durable;
      const lost = await unflushed([open('hold_never_flushed')], true);
      await lost.durable;
      for (const batch of [flushed, durably, lost]) expect(batch.outcomes).toEqual([{ ok: true, value: true }]);
    } finally {
      await db.destroy().catch(() => undefined);
    }
    await cluster!.kill();
    cluster!.start();

    const client = new pg.Client({ connectionString: cluster!.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string }>('select id from holds where account_id = $1 order by id', [ACCOUNT]);
      expect(rows.map((row) => row.id)).toEqual(['hold_durably', 'hold_flushed']);
      const { rows: accounts } = await client.query<{ reserved: string }>('select reserved_nanos::text as reserved from accounts where id = $1', [ACCOUNT]);
      expect(accounts[0]!.reserved).toBe('2000');
    } finally {
      await client.end();
    }
  }, 60_000);
});
