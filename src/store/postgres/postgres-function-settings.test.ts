/**
 * The request path's PostgreSQL functions read rows by key however small their tables were when a
 * connection first planned them (migration 0016), on PostgreSQL (when TOLLGATE_TEST_POSTGRES_URL is
 * set). A connection runs the hold batches first on an empty `holds` table, as a new gateway on a
 * new database does, and again once the table holds thousands of rows; `auto_explain`, told to
 * send each nested statement's plan to the client as a notice, shows how each statement read it.
 * Without the migration the cached plans read `holds` by a sequential scan of the whole table.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresUrl } from '../../../test/support/databases.js';
import { useMigratedPostgres } from '../../../test/support/batch-equivalence.js';

const ACCOUNT = 'acct_plans';
const KEY = 'key_plans';
const ROWS = 5_000;

function open(id: string): Record<string, unknown> {
  return { kind: 'open', id, account_id: ACCOUNT, key_id: KEY, request_id: `req_${id}`, model: 'm', amount_nanos: '1000', expires_at: 4_000_000_000_000, created_at: 1 };
}

function settle(holdId: string): Record<string, unknown> {
  return {
    kind: 'settle',
    hold_id: holdId,
    created_at: 2,
    charge: { request_id: `req_${holdId}`, key_id: KEY, model: 'm', cost_nanos: '600', excess_nanos: '0', input_tokens: 1, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 1, reasoning_tokens: 0 },
    excess_note: 'excess',
  };
}

function checkpoint(holdId: string): Record<string, unknown> {
  return { kind: 'checkpoint', checkpoints: [{ hold_id: holdId, expires_at: 4_000_000_000_001, cost_nanos: '10', input_tokens: 1, cached_input_tokens: 0, output_tokens: 1, reasoning_tokens: 0 }] };
}

describe.skipIf(postgresUrl === undefined)('PostgreSQL request-path functions and their plans (migration 0016)', () => {
  const database = useMigratedPostgres();
  const setup = database.client;

  it('every tollgate_ function runs with sequential scans off', async () => {
    const { rows } = await setup().query<{ name: string; config: string[] | null }>(
      "select p.oid::regprocedure::text as name, p.proconfig as config from pg_proc p where p.proname like 'tollgate\\_%' and p.pronamespace = current_schema()::regnamespace order by 1",
    );
    expect(rows.length).toBeGreaterThanOrEqual(9);
    for (const row of rows) expect({ name: row.name, config: row.config ?? [] }).toEqual({ name: row.name, config: expect.arrayContaining(['enable_seqscan=off']) });
  });

  it('reads holds by its primary key after the table has grown under a connection that planned it empty', async () => {
    const admin = setup();
    await admin.query('insert into accounts (id, name, balance_nanos, reserved_nanos, disabled, created_at) values ($1, $1, $2, 0, 0, 0)', [ACCOUNT, (ROWS * 10_000).toString()]);
    await admin.query('insert into api_keys (id, account_id, prefix, hash, created_at) values ($1, $2, $1, $1, 0)', [KEY, ACCOUNT]);

    const client = new pg.Client({ connectionString: database.url() });
    await client.connect();
    const plans: string[] = [];
    client.on('notice', (notice) => plans.push(notice.message ?? ''));
    try {
      await client.query("load 'auto_explain'");
      await client.query("set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on; set auto_explain.log_level = 'notice'");
      const batch = async (fn: string, operations: unknown[]) => (await client.query(`select ${fn}($1::jsonb, false) as outcomes`, [JSON.stringify(operations)])).rows[0].outcomes;

      // Planned while holds is empty: the set-based batch (opens, then settles) and the one that
      // goes operation by operation (a checkpoint takes it).
      expect(await batch('tollgate_apply_hold_operations', [open('hold_first')])).toEqual([{ ok: true, value: true }]);
      expect(await batch('tollgate_apply_hold_operations', [settle('hold_first')])).toEqual([{ ok: true, value: true }]);
      expect(await batch('tollgate_apply_hold_operations', [open('hold_second'), checkpoint('hold_second')])).toEqual([{ ok: true, value: true }, { ok: true, value: true }]);

      // The table grows by thousands of rows, written by another connection.
      for (let start = 0; start < ROWS; start += 250) {
        const operations = Array.from({ length: 250 }, (_, index) => open(`hold_${String(start + index).padStart(5, '0')}`));
        await admin.query('select tollgate_apply_hold_operations($1::jsonb, false)', [JSON.stringify(operations)]);
      }

      plans.length = 0;
      expect(await batch('tollgate_apply_hold_operations', [settle('hold_00042'), settle('hold_04242')])).toEqual([{ ok: true, value: true }, { ok: true, value: true }]);
      expect(await batch('tollgate_apply_hold_operations', [open('hold_third'), checkpoint('hold_00043'), settle('hold_00044')])).toEqual([
        { ok: true, value: true },
        { ok: true, value: true },
        { ok: true, value: true },
      ]);
      const readingHolds = plans.filter((plan) => /\bon holds\b/.test(plan));
      expect(readingHolds.length).toBeGreaterThan(3);
      expect(plans.filter((plan) => /Seq Scan on holds/.test(plan))).toEqual([]);
      expect(readingHolds.some((plan) => /Index Scan using holds_pkey on holds/.test(plan))).toBe(true);
    } finally {
      await client.end();
    }
  }, 60_000);
});
