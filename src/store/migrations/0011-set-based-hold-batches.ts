/**
 * The PostgreSQL hold batch of migration 0008, rewritten to write per batch instead of per
 * operation (docs/architecture.md, Money). 0008 ran three or four statements for every open and
 * settle (the account's guarded UPDATE, the hold's INSERT or UPDATE, the ledger's INSERT), so a
 * batch of eight operations cost some thirty executor runs. Here the batch locks the holds it
 * settles and the accounts it touches once, in the same global order as before (holds by id, then
 * accounts by id), reads the accounts' balances into variables, decides every operation in arrival
 * order against those variables exactly as the guarded UPDATEs did, and then writes everything in
 * four statements: the settled holds, the new holds, the ledger rows (in arrival order) and the
 * accounts' final balances. A key budget's reservation and spend still go through migration
 * 0006's functions, per operation and in order, because they read what earlier ones wrote.
 *
 * Equivalence with 0008 is what makes this safe: while the batch holds the accounts' row locks
 * nobody else can change them, so a guard checked against a variable decides as the UPDATE would
 * have. Anything outside the common case goes to 0008's function, kept under the name
 * `tollgate_apply_hold_operations_in_turn`: a batch with a checkpoint, a settle of a hold opened in
 * the same batch, and the `isolate` retry (every operation in its own subtransaction). A batch in
 * which any write fails (a foreign key, a duplicate id, a check) fails as a whole, as before, and
 * postgres-hold-batch.ts sends it again with `isolate`, so only the bad operation fails.
 *
 * The function runs with generic plans: its statements take arrays, for which PostgreSQL would
 * otherwise re-plan custom plans on every call.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

const KEEP_IN_TURN = sql`alter function tollgate_apply_hold_operations(jsonb, boolean) rename to tollgate_apply_hold_operations_in_turn`;

const APPLY_HOLD_OPERATIONS = sql`
create function tollgate_apply_hold_operations(operations jsonb, isolate boolean) returns jsonb
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
           array_agg(budget_period) filter (where state = 'open'), array_agg(budget_period_start) filter (where state = 'open')
      into held_ids, held_accounts, held_amounts, held_keys, held_periods, held_starts
      from (select id, account_id, amount_nanos, key_id, budget_period, budget_period_start, state from holds
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
    insert into holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, budget_period, budget_period_start)
    select h.id, h.account_id, h.key_id, h.request_id, h.model, h.amount_nanos, 'open', h.expires_at, h.created_at, h.budget_period, h.budget_period_start
      from unnest(new_holds) as h;
  end if;
  if cardinality(entries) > 0 then
    insert into ledger (account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens,
                        cache_write_input_tokens, output_tokens, reasoning_tokens, note, created_at)
    select e.account_id, e.kind, e.amount_nanos, e.request_id, e.key_id, e.model, e.input_tokens, e.cached_input_tokens,
           e.cache_write_input_tokens, e.output_tokens, e.reasoning_tokens, e.note, e.created_at
      from unnest(entries) with ordinality as e
     order by e.ordinality;
  end if;
  update accounts set balance_nanos = changed.balance, reserved_nanos = changed.reserved
    from unnest(account_ids, balances, reserveds) as changed(id, balance, reserved)
   where accounts.id = changed.id and (accounts.balance_nanos <> changed.balance or accounts.reserved_nanos <> changed.reserved);
  return to_jsonb(outcomes);
end $$`;

export function setBasedHoldBatchesMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine !== 'postgres') return;
      await KEEP_IN_TURN.execute(db);
      await APPLY_HOLD_OPERATIONS.execute(db);
    },
  };
}
