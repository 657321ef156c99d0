/**
 * The request path's PostgreSQL functions (migrations 0006, 0008, 0011, 0012 and 0015: hold
 * batches, checkpoints, key budgets) find every row they touch by its primary key, and run with
 * `enable_seqscan = off` from this migration on, so that they always do.
 *
 * Why: PL/pgSQL caches a statement's plan for the life of the connection, and the batch function
 * forces generic plans. A plan made while `holds` was small (a new database, or one whose table has
 * never been analyzed, e.g. with autovacuum off) reads it by a sequential scan, which is cheapest
 * for a few pages, and keeps doing so as the table grows by a row per request: the cached plan is
 * replaced only when statistics change, and with autovacuum off they never do. In a benchmark on
 * a new database, `auto_explain` showed the batch's hold lock step and its `update holds … where
 * id = any(…)` as sequential scans of the whole table (planned at a cost of 15–18, the table's size
 * when the connection first ran them), about once per batch, so PostgreSQL's CPU per request grew
 * through the run. Every statement in these functions names its rows by key, and each such lookup
 * has an index, so with sequential scans off the planner picks the index however small the table
 * is (a statement with no index to use would still scan; none of these has one).
 *
 * `create or replace function` replaces a function's settings with those of the new definition:
 * a later migration that replaces one of these functions writes `set enable_seqscan = off` in it
 * (src/store/postgres/postgres-function-settings.test.ts fails otherwise).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

export function indexOnlyFunctionsMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine !== 'postgres') return;
      await sql`
do $$
declare
  fn regprocedure;
begin
  for fn in select p.oid::regprocedure from pg_proc p
             where p.proname like 'tollgate\_%' and p.pronamespace = current_schema()::regnamespace loop
    execute format('alter function %s set enable_seqscan = off', fn);
  end loop;
end $$`.execute(db);
    },
  };
}
