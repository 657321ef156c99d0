/**
 * Key budgets and key administration (docs/architecture.md, Money): a key may carry a spend limit
 * (`budget_nanos` per `budget_period`: total, day, week or month, calendar UTC) and can be deleted
 * (`deleted_at`: refused from then on, its ledger history kept). A key's spend lives in
 * `key_spend`, one row per (key, period kind, period start): a new period is a new row, so nothing
 * resets anything. Each hold remembers the period it counts against, so its settlement (or its
 * expiry) moves its cost there. Same tables on both engines.
 *
 * On PostgreSQL the hold batches of migration 0008 run as SQL functions; the two they call for key
 * budgets are created here, with the same guarded SQL as SQLite's (store/queries/key-budget-queries.ts).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

const PERIODS = sql`('total', 'day', 'week', 'month')`;

/**
 * For an `open` operation of migration 0008: true when it carries no budget period, or when the
 * key's budget covers spent + reserved + this hold in that period (then the hold is added to the
 * period's reservation, the row created if new); false, changing nothing, when it does not (or the
 * key no longer has a budget of that period).
 */
const RESERVE_KEY_BUDGET = sql`
create function tollgate_reserve_key_budget(operation jsonb) returns boolean language plpgsql as $$
declare
  wanted_key text := operation->>'key_id';
  wanted_period text := operation->>'budget_period';
  wanted_start bigint := (operation->>'budget_period_start')::bigint;
  amount bigint := (operation->>'amount_nanos')::bigint;
begin
  if wanted_period is null then
    return true;
  end if;
  insert into key_spend (key_id, period, period_start, spent_nanos, reserved_nanos)
  select id, budget_period, wanted_start, 0, amount from api_keys
   where id = wanted_key and budget_period = wanted_period and budget_nanos >= amount
  on conflict (key_id, period, period_start) do update set reserved_nanos = key_spend.reserved_nanos + excluded.reserved_nanos
   where key_spend.spent_nanos + key_spend.reserved_nanos + excluded.reserved_nanos
      <= (select budget_nanos from api_keys where api_keys.id = key_spend.key_id and api_keys.budget_period = key_spend.period);
  return found;
end $$`;

/** For a hold leaving the open state: its cost moves from its period's reservation to its spend. */
const SETTLE_KEY_SPEND = sql`
create function tollgate_settle_key_spend(settled_key text, settled_period text, settled_start bigint, held bigint, cost bigint)
returns void language plpgsql as $$
begin
  if settled_period is null then
    return;
  end if;
  update key_spend set reserved_nanos = reserved_nanos - held, spent_nanos = spent_nanos + cost
   where key_id = settled_key and period = settled_period and period_start = settled_start;
end $$`;

export function keyBudgetsMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('api_keys').addColumn('budget_nanos', 'bigint', (column) => column.check(sql`budget_nanos >= 0`)).execute();
      await db.schema.alterTable('api_keys').addColumn('budget_period', 'text', (column) => column.check(sql`budget_period in ${PERIODS}`)).execute();
      await db.schema.alterTable('api_keys').addColumn('deleted_at', 'bigint').execute();
      await db.schema.alterTable('holds').addColumn('budget_period', 'text').execute();
      await db.schema.alterTable('holds').addColumn('budget_period_start', 'bigint').execute();
      await db.schema
        .createTable('key_spend')
        .addColumn('key_id', 'text', (column) => column.notNull().references('api_keys.id'))
        .addColumn('period', 'text', (column) => column.notNull())
        .addColumn('period_start', 'bigint', (column) => column.notNull())
        .addColumn('spent_nanos', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('reserved_nanos', 'bigint', (column) => column.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('key_spend_primary_key', ['key_id', 'period', 'period_start'])
        .addCheckConstraint('key_spend_period_known', sql`period in ${PERIODS}`)
        .addCheckConstraint('key_spend_spent_not_negative', sql`spent_nanos >= 0`)
        .addCheckConstraint('key_spend_reserved_not_negative', sql`reserved_nanos >= 0`)
        .execute();
      if (engine === 'postgres') {
        for (const statement of [RESERVE_KEY_BUDGET, SETTLE_KEY_SPEND]) await statement.execute(db);
      }
    },
  };
}
