/**
 * Quota slices (docs/architecture.md, Money, "Quota slices"): an instance reserves a slice of an
 * account's balance in one durable write and admits holds from it in memory. A slice is a row of
 * `account_slices`, owned by one process (`owner`) under a lease, whose `amount_nanos` is counted in
 * its account's `reserved_nanos` exactly as an open hold's amount is, so the account's guarded
 * arithmetic (balance − reserved ≥ what a hold or a debit needs) counts it like any hold. The
 * account also keeps the part of `reserved_nanos` that its slices make up, `sliced_nanos`, so that
 * what its open holds reserve stays readable (reserved − sliced). Every statement that changes a
 * slice's amount changes its account's `reserved_nanos` and `sliced_nanos` by the same amount in
 * the same transaction (a settle, a checkpoint that moves a hold from its slice into a hold row, a
 * return, the sweep of an expired lease).
 *
 * A hold admitted from a slice has no row until it settles or reaches its first checkpoint; then its
 * row is written, keyed by the hold's id (`holds.slice_id` names the slice), so a settlement retried
 * finds it and changes nothing.
 *
 * On PostgreSQL the request path's batch functions learn the slice: a settle that names one settles a
 * hold without a row from it, and a checkpoint that names one moves the hold out of it into an open
 * row. Replaced here (a shipped migration is never edited), each as it was but for the slice:
 * 0008's `tollgate_settle_hold` and `tollgate_checkpoint_holds` (called by the operation-by-operation
 * batch), that batch itself (`tollgate_apply_hold_operations_in_turn`, which now also locks the
 * slices and their accounts up front), and 0012's set-based `tollgate_apply_hold_operations`. Rows
 * are locked in one global order: holds, then accounts, then slices, each by id; the slice
 * statements outside the batch (grant, return, recall, renewal, sweep: queries/slice-queries.ts)
 * keep it.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

/** 0012's settle, plus a hold admitted from a slice that has no row yet. */
const SETTLE_HOLD = sql`
create or replace function tollgate_settle_hold(operation jsonb) returns boolean language plpgsql as $$
declare
  charge jsonb := operation->'charge';
  slice jsonb := operation->'slice';
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
  if found then
    update accounts set reserved_nanos = reserved_nanos - held, balance_nanos = balance_nanos - cost where id = settled_account;
    perform tollgate_settle_key_spend(settled_key, settled_period, settled_start, held, cost);
  else
    -- Admitted from a slice and never checkpointed: settled once, out of its slice, its row written
    -- as settled. A row of the hold in any state means it was settled (or expired) already.
    if slice is null or exists (select 1 from holds where id = operation->>'hold_id') then
      return false;
    end if;
    held := (slice->>'amount_nanos')::bigint;
    update account_slices set amount_nanos = amount_nanos - held
     where id = slice->>'slice_id' and account_id = slice->>'account_id' and amount_nanos >= held
    returning account_id into settled_account;
    if not found then
      return false;
    end if;
    settled_surface := slice->>'surface';
    insert into holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, surface, slice_id)
    values (operation->>'hold_id', settled_account, slice->>'key_id', slice->>'request_id', slice->>'model', held, 'settled',
            (slice->>'admitted_at')::bigint, (slice->>'admitted_at')::bigint, settled_surface, slice->>'slice_id');
    update accounts set reserved_nanos = reserved_nanos - held, sliced_nanos = sliced_nanos - held, balance_nanos = balance_nanos - cost
     where id = settled_account;
  end if;
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

/**
 * 0008's checkpoint, plus the first checkpoint of a hold admitted from a slice: its amount moves
 * from the slice to a new open row in one step (the account's reserved amount does not change, its
 * sliced part shrinks), so from then on it is an ordinary hold that expires and bills its last
 * checkpoint like any other.
 */
const CHECKPOINT_HOLDS = sql`
create or replace function tollgate_checkpoint_holds(operation jsonb) returns boolean language plpgsql as $$
declare
  point jsonb;
  slice jsonb;
  held bigint;
  slice_account text;
begin
  for point in select value from jsonb_array_elements(operation->'checkpoints') loop
    slice := point->'slice';
    continue when slice is null or exists (select 1 from holds where id = point->>'hold_id');
    held := (slice->>'amount_nanos')::bigint;
    update account_slices set amount_nanos = amount_nanos - held
     where id = slice->>'slice_id' and account_id = slice->>'account_id' and amount_nanos >= held
    returning account_id into slice_account;
    continue when not found;
    insert into holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, surface, slice_id)
    values (point->>'hold_id', slice_account, slice->>'key_id', slice->>'request_id', slice->>'model', held, 'open',
            (point->>'expires_at')::bigint, (slice->>'admitted_at')::bigint, slice->>'surface', slice->>'slice_id');
    update accounts set sliced_nanos = sliced_nanos - held where id = slice_account;
  end loop;
  update holds set expires_at = checkpoint.expires_at,
                   checkpoint_cost_nanos = checkpoint.cost_nanos,
                   checkpoint_input_tokens = checkpoint.input_tokens,
                   checkpoint_cached_input_tokens = checkpoint.cached_input_tokens,
                   checkpoint_output_tokens = checkpoint.output_tokens,
                   checkpoint_reasoning_tokens = checkpoint.reasoning_tokens
    from jsonb_to_recordset(operation->'checkpoints') as checkpoint(hold_id text, expires_at bigint, cost_nanos bigint,
           input_tokens integer, cached_input_tokens integer, output_tokens integer, reasoning_tokens integer)
   where holds.id = checkpoint.hold_id and holds.state = 'open';
  return true;
end $$`;

/**
 * 0008's batch, operation by operation, locking up front also the slices that settles and
 * checkpoints name and their accounts (as the operations say; a slice of another account is refused
 * by the operation's own guard), in the global order: holds, accounts, slices. Each lock step names
 * its rows as `id = any(array(...))`: the function's plan is cached generic, and a generic plan
 * reckons a JSON array at 100 elements, so `id in (select ...)` over them was planned as a hash
 * join over a sequential scan of the whole table, run once per batch (the table grows with every
 * request); an array is reckoned at 10 elements and read by primary key.
 */
const APPLY_HOLD_OPERATIONS_IN_TURN = sql`
create or replace function tollgate_apply_hold_operations_in_turn(operations jsonb, isolate boolean) returns jsonb language plpgsql as $$
declare
  operation jsonb;
  outcome jsonb;
  outcomes jsonb[] := '{}';
begin
  perform 1 from holds
   where id = any(array(select item->>'hold_id' from jsonb_array_elements(operations) as item where item->>'kind' = 'settle'
                        union
                        select checkpoint->>'hold_id' from jsonb_array_elements(operations) as item,
                               jsonb_array_elements(item->'checkpoints') as checkpoint where item->>'kind' = 'checkpoint'))
   order by id for no key update;
  perform 1 from accounts
   where id = any(array(select item->>'account_id' from jsonb_array_elements(operations) as item where item->>'kind' = 'open'
                        union
                        select holds.account_id from jsonb_array_elements(operations) as item
                          join holds on holds.id = item->>'hold_id' where item->>'kind' = 'settle'
                        union
                        select item->'slice'->>'account_id' from jsonb_array_elements(operations) as item
                         where item->>'kind' = 'settle' and item->'slice' is not null
                        union
                        select checkpoint->'slice'->>'account_id' from jsonb_array_elements(operations) as item,
                               jsonb_array_elements(item->'checkpoints') as checkpoint
                         where item->>'kind' = 'checkpoint' and checkpoint->'slice' is not null))
   order by id for no key update;
  perform 1 from account_slices
   where id = any(array(select item->'slice'->>'slice_id' from jsonb_array_elements(operations) as item
                         where item->>'kind' = 'settle' and item->'slice' is not null
                        union
                        select checkpoint->'slice'->>'slice_id' from jsonb_array_elements(operations) as item,
                               jsonb_array_elements(item->'checkpoints') as checkpoint
                         where item->>'kind' = 'checkpoint' and checkpoint->'slice' is not null))
   order by id for no key update;
  for operation in select value from jsonb_array_elements(operations) loop
    if isolate then
      begin
        outcome := tollgate_apply_hold_operation(operation);
      exception when others then
        outcome := jsonb_build_object('ok', false, 'code', sqlstate, 'message', sqlerrm);
      end;
    else
      outcome := tollgate_apply_hold_operation(operation);
    end if;
    outcomes := outcomes || outcome;
  end loop;
  return to_jsonb(outcomes);
end $$`;

/**
 * 0012's set-based batch (see migration 0011 for why it decides as the operation-by-operation one
 * does), plus settles of holds admitted from a slice: the slices they name are locked after the
 * accounts and read into variables like the balances, each such settle is decided against them
 * (no row of the hold in any state, the slice's account as the operation says, enough left in the
 * slice) and the batch writes the slices' new amounts in one more statement.
 */
const APPLY_HOLD_OPERATIONS = sql`
create or replace function tollgate_apply_hold_operations(operations jsonb, isolate boolean) returns jsonb
language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  operation jsonb;
  charge jsonb;
  slice jsonb;
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
  -- Every hold a settle names that has a row, in any state: not to be settled from a slice.
  known_ids text[] := '{}';
  settled_ids text[] := '{}';
  -- Holds settled from their slice by this batch (a second settle of one finds it here).
  sliced_settled text[] := '{}';
  -- The accounts this batch touches, locked, with their balances as the batch changes them.
  account_ids text[];
  balances bigint[];
  reserveds bigint[];
  sliceds bigint[];
  disableds integer[];
  -- The slices this batch settles from, locked, with their amounts as the batch changes them.
  slice_ids text[];
  slice_accounts text[];
  slice_amounts bigint[];
  slot integer;
  held integer;
  piece integer;
  amount bigint;
  cost bigint;
  excess bigint;
  created bigint;
  settled_surface text;
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
           array_agg(surface) filter (where state = 'open'), coalesce(array_agg(id), '{}')
      into held_ids, held_accounts, held_amounts, held_keys, held_periods, held_starts, held_surfaces, known_ids
      from (select id, account_id, amount_nanos, key_id, budget_period, budget_period_start, surface, state from holds
             where id = any(settle_ids) order by id for no key update) as locked;
  end if;
  select array_agg(id), array_agg(balance_nanos), array_agg(reserved_nanos), array_agg(sliced_nanos), array_agg(disabled)
    into account_ids, balances, reserveds, sliceds, disableds
    from (select id, balance_nanos, reserved_nanos, sliced_nanos, disabled from accounts
           where id = any(array(select item->>'account_id' from jsonb_array_elements(operations) as item where item->>'kind' = 'open'
                                union select unnest(held_accounts)
                                union select item->'slice'->>'account_id' from jsonb_array_elements(operations) as item
                                       where item->>'kind' = 'settle' and item->'slice' is not null))
           order by id for no key update) as locked;
  select array_agg(id), array_agg(account_id), array_agg(amount_nanos)
    into slice_ids, slice_accounts, slice_amounts
    from (select id, account_id, amount_nanos from account_slices
           where id = any(array(select item->'slice'->>'slice_id' from jsonb_array_elements(operations) as item
                                 where item->>'kind' = 'settle' and item->'slice' is not null))
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
          new_hold.state := 'open';
          new_hold.expires_at := (operation->>'expires_at')::bigint;
          new_hold.created_at := created;
          new_hold.budget_period := operation->>'budget_period';
          new_hold.budget_period_start := (operation->>'budget_period_start')::bigint;
          new_hold.surface := operation->>'surface';
          new_hold.slice_id := null;
          new_holds := new_holds || new_hold;
          outcome := true;
        end if;
      end if;
    else
      held := array_position(held_ids, operation->>'hold_id');
      slice := operation->'slice';
      charge := operation->'charge';
      cost := coalesce((charge->>'cost_nanos')::bigint, 0);
      excess := coalesce((charge->>'excess_nanos')::bigint, 0);
      outcome := false;
      if held is not null then
        -- 0008's tollgate_settle_hold: once per hold; a second settle of it finds it no longer open.
        held_ids[held] := null;
        settled_ids := settled_ids || (operation->>'hold_id');
        slot := array_position(account_ids, held_accounts[held]);
        reserveds[slot] := reserveds[slot] - held_amounts[held];
        balances[slot] := balances[slot] - cost;
        if held_periods[held] is not null then
          perform tollgate_settle_key_spend(held_keys[held], held_periods[held], held_starts[held], held_amounts[held], cost);
        end if;
        settled_surface := held_surfaces[held];
        outcome := true;
      elsif slice is not null and not (operation->>'hold_id' = any(known_ids)) and not (operation->>'hold_id' = any(sliced_settled)) then
        -- tollgate_settle_hold's slice branch (this migration): out of the slice, the row written as settled.
        amount := (slice->>'amount_nanos')::bigint;
        piece := array_position(slice_ids, slice->>'slice_id');
        if piece is not null and slice_accounts[piece] = slice->>'account_id' and slice_amounts[piece] >= amount then
          slice_amounts[piece] := slice_amounts[piece] - amount;
          sliced_settled := sliced_settled || (operation->>'hold_id');
          slot := array_position(account_ids, slice_accounts[piece]);
          reserveds[slot] := reserveds[slot] - amount;
          sliceds[slot] := sliceds[slot] - amount;
          balances[slot] := balances[slot] - cost;
          settled_surface := slice->>'surface';
          new_hold.id := operation->>'hold_id';
          new_hold.account_id := slice_accounts[piece];
          new_hold.key_id := slice->>'key_id';
          new_hold.request_id := slice->>'request_id';
          new_hold.model := slice->>'model';
          new_hold.amount_nanos := amount;
          new_hold.state := 'settled';
          new_hold.expires_at := (slice->>'admitted_at')::bigint;
          new_hold.created_at := (slice->>'admitted_at')::bigint;
          new_hold.budget_period := null;
          new_hold.budget_period_start := null;
          new_hold.surface := settled_surface;
          new_hold.slice_id := slice->>'slice_id';
          new_holds := new_holds || new_hold;
          outcome := true;
        end if;
      end if;
      if outcome then
        -- The checks 0008's UPDATE met at once; here the write comes at the end, so they are checked now.
        if reserveds[slot] < 0 or sliceds[slot] < 0 then
          raise exception 'reserved_nanos of account % would go below zero', account_ids[slot] using errcode = '23514';
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
          entry.surface := settled_surface;
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
      end if;
    end if;
    outcomes := outcomes || jsonb_build_object('ok', true, 'value', outcome);
  end loop;

  if cardinality(settled_ids) > 0 then
    update holds set state = 'settled' where id = any(settled_ids);
  end if;
  if cardinality(new_holds) > 0 then
    insert into holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, budget_period, budget_period_start, surface, slice_id)
    select h.id, h.account_id, h.key_id, h.request_id, h.model, h.amount_nanos, h.state, h.expires_at, h.created_at, h.budget_period,
           h.budget_period_start, h.surface, h.slice_id
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
  update accounts set balance_nanos = changed.balance, reserved_nanos = changed.reserved, sliced_nanos = changed.sliced
    from unnest(account_ids, balances, reserveds, sliceds) as changed(id, balance, reserved, sliced)
   where accounts.id = changed.id
     and (accounts.balance_nanos <> changed.balance or accounts.reserved_nanos <> changed.reserved or accounts.sliced_nanos <> changed.sliced);
  if cardinality(sliced_settled) > 0 then
    update account_slices set amount_nanos = changed.remaining
      from unnest(slice_ids, slice_amounts) as changed(id, remaining)
     where account_slices.id = changed.id and account_slices.amount_nanos <> changed.remaining;
  end if;
  return to_jsonb(outcomes);
end $$`;

export function quotaSlicesMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('accounts')
        .addColumn('sliced_nanos', 'bigint', (column) => column.notNull().defaultTo(0).check(sql`sliced_nanos >= 0`))
        .execute();
      await db.schema.alterTable('holds').addColumn('slice_id', 'text').execute();
      await db.schema
        .createTable('account_slices')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
        .addColumn('owner', 'text', (column) => column.notNull())
        .addColumn('amount_nanos', 'bigint', (column) => column.notNull())
        .addColumn('state', 'text', (column) => column.notNull())
        .addColumn('lease_until', 'bigint', (column) => column.notNull())
        .addColumn('created_at', 'bigint', (column) => column.notNull())
        .addCheckConstraint('account_slices_amount_not_negative', sql`amount_nanos >= 0`)
        .addCheckConstraint('account_slices_state_known', sql`state in ('active', 'recalled', 'closed')`)
        .execute();
      await db.schema.createIndex('account_slices_account_id_state').on('account_slices').columns(['account_id', 'state']).execute();
      await db.schema.createIndex('account_slices_owner').on('account_slices').column('owner').execute();
      await db.schema.createIndex('account_slices_lease_until').on('account_slices').column('lease_until').execute();
      if (engine !== 'postgres') return;
      for (const statement of [SETTLE_HOLD, CHECKPOINT_HOLDS, APPLY_HOLD_OPERATIONS_IN_TURN, APPLY_HOLD_OPERATIONS]) await statement.execute(db);
    },
  };
}
