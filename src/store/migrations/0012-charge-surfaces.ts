/**
 * Which `/v1` endpoint (client surface: `responses`, `chat-completions`, `anthropic-messages`,
 * `embeddings`, …) each charge paid for, so that usage can be grouped by it (docs/architecture.md,
 * Money). A hold is opened with its surface and every settlement copies it from the hold onto its
 * ledger rows (the charge and its excess), whoever settles it: the request, the settle retrier or
 * the expiry sweep. The hold is the one source, so no path can bill a charge under another
 * endpoint than the one its hold was opened for. Rows written before this migration stay NULL:
 * nobody knows their endpoint, and the usage report calls them `unknown`. Nullable columns, added
 * without a default, so neither engine rewrites the ledger.
 *
 * PostgreSQL settles the request path in functions, so they are replaced here (a shipped migration
 * is never edited): 0008's `tollgate_open_hold` and `tollgate_settle_hold`, which the
 * operation-by-operation batch (`tollgate_apply_hold_operations_in_turn`) calls, and 0011's
 * set-based `tollgate_apply_hold_operations`, each as it was but for the surface.
 *
 * The request log has had a `surface` column since migration 0007; it gains the index its new
 * filter seeks in, like the other filters' `(filter, at)` indexes.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

/** 0008's open, recording the hold's surface. */
const OPEN_HOLD = sql`
create or replace function tollgate_open_hold(operation jsonb) returns boolean language plpgsql as $$
declare
  amount bigint := (operation->>'amount_nanos')::bigint;
begin
  -- Check and reserve in one statement: the row lock serializes holds on one account, and each
  -- re-evaluates the guard against what the previous one reserved.
  update accounts set reserved_nanos = reserved_nanos + amount
   where id = operation->>'account_id' and disabled = 0 and balance_nanos - reserved_nanos >= amount;
  if not found then
    return false;
  end if;
  if not tollgate_reserve_key_budget(operation) then
    update accounts set reserved_nanos = reserved_nanos - amount where id = operation->>'account_id';
    return null;
  end if;
  insert into holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, budget_period, budget_period_start, surface)
  values (operation->>'id', operation->>'account_id', operation->>'key_id', operation->>'request_id', operation->>'model',
          amount, 'open', (operation->>'expires_at')::bigint, (operation->>'created_at')::bigint,
          operation->>'budget_period', (operation->>'budget_period_start')::bigint, operation->>'surface');
  return true;
end $$`;

/** 0008's settle, copying the hold's surface onto its charge and excess. */
const SETTLE_HOLD = sql`
create or replace function tollgate_settle_hold(operation jsonb) returns boolean language plpgsql as $$
declare
  charge jsonb := operation->'charge';
  cost bigint := coalesce((charge->>'cost_nanos')::bigint, 0);
  excess bigint := coalesce((charge->>'excess_nanos')::bigint, 0);
  created bigint := (operation->>'created_at')::bigint;
  settled_account text;
  held bigint;
  settled_key text;
  settled_period text;
  settled_start bigint;
  settled_surface text;
begin
  update holds set state = 'settled' where id = operation->>'hold_id' and state = 'open'
  returning account_id, amount_nanos, key_id, budget_period, budget_period_start, surface
       into settled_account, held, settled_key, settled_period, settled_start, settled_surface;
  if not found then
    return false;
  end if;
  update accounts set reserved_nanos = reserved_nanos - held, balance_nanos = balance_nanos - cost where id = settled_account;
  perform tollgate_settle_key_spend(settled_key, settled_period, settled_start, held, cost);
  if charge is not null then
    insert into ledger (account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens,
                        cache_write_input_tokens, output_tokens, reasoning_tokens, note, created_at, surface)
    values (settled_account, 'charge', cost, charge->>'request_id', charge->>'key_id', charge->>'model',
            (charge->>'input_tokens')::integer, (charge->>'cached_input_tokens')::integer,
            (charge->>'cache_write_input_tokens')::integer, (charge->>'output_tokens')::integer,
            (charge->>'reasoning_tokens')::integer, null, created, settled_surface);
    if excess > 0 then
      insert into ledger (account_id, kind, amount_nanos, request_id, key_id, model, note, created_at, surface)
      values (settled_account, 'excess', excess, charge->>'request_id', charge->>'key_id', charge->>'model', operation->>'excess_note', created, settled_surface);
    end if;
  end if;
  return true;
end $$`;

/** 0011's set-based batch (see that migration for why it is equivalent to 0008's), with the surface. */
const APPLY_HOLD_OPERATIONS = sql`
create or replace function tollgate_apply_hold_operations(operations jsonb, isolate boolean) returns jsonb
language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  operation jsonb;
  charge jsonb;
  outcome boolean;
  outcomes jsonb[] := '{}';
  other_kinds boolean;
  open_ids text[];
  settle_ids text[];
  -- The holds this batch settles that were still open, locked: parallel arrays by position.
  held_ids text[];
  held_accounts text[];
  held_amounts bigint[];
  held_keys text[];
  held_periods text[];
  held_starts bigint[];
  held_surfaces text[];
  settled_ids text[] := '{}';
  -- The accounts this batch touches, locked, with their balances as the batch changes them.
  account_ids text[];
  balances bigint[];
  reserveds bigint[];
  disableds integer[];
  slot integer;
  held integer;
  amount bigint;
  cost bigint;
  excess bigint;
  created bigint;
  new_hold holds;
  new_holds holds[] := '{}';
  entry ledger;
  entries ledger[] := '{}';
begin
  if isolate then
    return tollgate_apply_hold_operations_in_turn(operations, true);
  end if;
  select bool_or(item->>'kind' is distinct from 'open' and item->>'kind' is distinct from 'settle'),
         array_agg(item->>'id') filter (where item->>'kind' = 'open'),
         array_agg(item->>'hold_id') filter (where item->>'kind' = 'settle')
    into other_kinds, open_ids, settle_ids
    from jsonb_array_elements(operations) as item;
  if other_kinds or settle_ids && open_ids then
    return tollgate_apply_hold_operations_in_turn(operations, false);
  end if;

  if settle_ids is not null then
    select array_agg(id) filter (where state = 'open'), array_agg(account_id) filter (where state = 'open'),
           array_agg(amount_nanos) filter (where state = 'open'), array_agg(key_id) filter (where state = 'open'),
           array_agg(budget_period) filter (where state = 'open'), array_agg(budget_period_start) filter (where state = 'open'),
           array_agg(surface) filter (where state = 'open')
      into held_ids, held_accounts, held_amounts, held_keys, held_periods, held_starts, held_surfaces
      from (select id, account_id, amount_nanos, key_id, budget_period, budget_period_start, surface, state from holds
             where id = any(settle_ids) order by id for no key update) as locked;
  end if;
  select array_agg(id), array_agg(balance_nanos), array_agg(reserved_nanos), array_agg(disabled)
    into account_ids, balances, reserveds, disableds
    from (select id, balance_nanos, reserved_nanos, disabled from accounts
           where id in (select item->>'account_id' from jsonb_array_elements(operations) as item where item->>'kind' = 'open'
                        union select unnest(held_accounts))
           order by id for no key update) as locked;

  for operation in select value from jsonb_array_elements(operations) loop
    created := (operation->>'created_at')::bigint;
    if operation->>'kind' = 'open' then
      -- 0008's tollgate_open_hold: reserve if the spendable balance covers it, then the key budget.
      amount := (operation->>'amount_nanos')::bigint;
      slot := array_position(account_ids, operation->>'account_id');
      if slot is null or disableds[slot] <> 0 or balances[slot] - reserveds[slot] < amount then
        outcome := false;
      else
        reserveds[slot] := reserveds[slot] + amount;
        if operation->>'budget_period' is not null and not tollgate_reserve_key_budget(operation) then
          reserveds[slot] := reserveds[slot] - amount;
          outcome := null;
        else
          new_hold.id := operation->>'id';
          new_hold.account_id := operation->>'account_id';
          new_hold.key_id := operation->>'key_id';
          new_hold.request_id := operation->>'request_id';
          new_hold.model := operation->>'model';
          new_hold.amount_nanos := amount;
          new_hold.expires_at := (operation->>'expires_at')::bigint;
          new_hold.created_at := created;
          new_hold.budget_period := operation->>'budget_period';
          new_hold.budget_period_start := (operation->>'budget_period_start')::bigint;
          new_hold.surface := operation->>'surface';
          new_holds := new_holds || new_hold;
          outcome := true;
        end if;
      end if;
    else
      -- 0008's tollgate_settle_hold: once per hold; a second settle of it finds it no longer open.
      held := array_position(held_ids, operation->>'hold_id');
      if held is null then
        outcome := false;
      else
        held_ids[held] := null;
        settled_ids := settled_ids || (operation->>'hold_id');
        charge := operation->'charge';
        cost := coalesce((charge->>'cost_nanos')::bigint, 0);
        excess := coalesce((charge->>'excess_nanos')::bigint, 0);
        slot := array_position(account_ids, held_accounts[held]);
        reserveds[slot] := reserveds[slot] - held_amounts[held];
        balances[slot] := balances[slot] - cost;
        -- The check 0008's UPDATE met at once; here the write comes at the end, so it is checked now.
        if reserveds[slot] < 0 then
          raise exception 'reserved_nanos of account % would go below zero', account_ids[slot] using errcode = '23514';
        end if;
        if held_periods[held] is not null then
          perform tollgate_settle_key_spend(held_keys[held], held_periods[held], held_starts[held], held_amounts[held], cost);
        end if;
        if charge is not null then
          entry.account_id := account_ids[slot];
          entry.kind := 'charge';
          entry.amount_nanos := cost;
          entry.request_id := charge->>'request_id';
          entry.key_id := charge->>'key_id';
          entry.model := charge->>'model';
          entry.input_tokens := (charge->>'input_tokens')::integer;
          entry.cached_input_tokens := (charge->>'cached_input_tokens')::integer;
          entry.cache_write_input_tokens := (charge->>'cache_write_input_tokens')::integer;
          entry.output_tokens := (charge->>'output_tokens')::integer;
          entry.reasoning_tokens := (charge->>'reasoning_tokens')::integer;
          entry.note := null;
          entry.created_at := created;
          entry.surface := held_surfaces[held];
          entries := entries || entry;
          if excess > 0 then
            entry.kind := 'excess';
            entry.amount_nanos := excess;
            entry.input_tokens := 0;
            entry.cached_input_tokens := 0;
            entry.cache_write_input_tokens := 0;
            entry.output_tokens := 0;
            entry.reasoning_tokens := 0;
            entry.note := operation->>'excess_note';
            entries := entries || entry;
          end if;
        end if;
        outcome := true;
      end if;
    end if;
    outcomes := outcomes || jsonb_build_object('ok', true, 'value', outcome);
  end loop;

  if cardinality(settled_ids) > 0 then
    update holds set state = 'settled' where id = any(settled_ids);
  end if;
  if cardinality(new_holds) > 0 then
    insert into holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, budget_period, budget_period_start, surface)
    select h.id, h.account_id, h.key_id, h.request_id, h.model, h.amount_nanos, 'open', h.expires_at, h.created_at, h.budget_period, h.budget_period_start, h.surface
      from unnest(new_holds) as h;
  end if;
  if cardinality(entries) > 0 then
    insert into ledger (account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens,
                        cache_write_input_tokens, output_tokens, reasoning_tokens, note, created_at, surface)
    select e.account_id, e.kind, e.amount_nanos, e.request_id, e.key_id, e.model, e.input_tokens, e.cached_input_tokens,
           e.cache_write_input_tokens, e.output_tokens, e.reasoning_tokens, e.note, e.created_at, e.surface
      from unnest(entries) with ordinality as e
     order by e.ordinality;
  end if;
  update accounts set balance_nanos = changed.balance, reserved_nanos = changed.reserved
    from unnest(account_ids, balances, reserveds) as changed(id, balance, reserved)
   where accounts.id = changed.id and (accounts.balance_nanos <> changed.balance or accounts.reserved_nanos <> changed.reserved);
  return to_jsonb(outcomes);
end $$`;

export function chargeSurfacesMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('holds').addColumn('surface', 'text').execute();
      await db.schema.alterTable('ledger').addColumn('surface', 'text').execute();
      await db.schema.createIndex('request_log_surface_at').on('request_log').columns(['surface', 'at']).execute();
      if (engine !== 'postgres') return;
      for (const statement of [OPEN_HOLD, SETTLE_HOLD, APPLY_HOLD_OPERATIONS]) await statement.execute(db);
    },
  };
}
