/**
 * Group commit of holds on PostgreSQL (docs/architecture.md, Money): one function call applies a
 * batch of hold operations (open, settle, checkpoint) from many requests in one transaction and one
 * round trip. Each operation is its own function with the same guarded SQL the per-request
 * transactions had (a change to one operation replaces its function in a later migration). SQLite
 * needs nothing here: it runs the same operations through statements prepared once
 * (sqlite-hold-statements.ts).
 *
 * Operations arrive as a jsonb array (postgres-hold-batch.ts writes it); amounts travel as decimal
 * strings, so no 64-bit value passes through a JSON number.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreEngine } from '../schema.js';

/**
 * Reserve if the spendable balance covers it, then record the hold; false (nothing changed) when not.
 * A hold that carries a key budget period must also pass the key's budget (migration 0006): null
 * when it does not, the balance's reservation undone.
 */
const OPEN_HOLD = sql`
create function tollgate_open_hold(operation jsonb) returns boolean language plpgsql as $$
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
  insert into holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, budget_period, budget_period_start)
  values (operation->>'id', operation->>'account_id', operation->>'key_id', operation->>'request_id', operation->>'model',
          amount, 'open', (operation->>'expires_at')::bigint, (operation->>'created_at')::bigint,
          operation->>'budget_period', (operation->>'budget_period_start')::bigint);
  return true;
end $$`;

/**
 * Settle an open hold once: release it and, when a charge comes with it (the caller sends one only
 * when it costs or counts anything), debit the charge and append it (and its excess). False when
 * the hold was no longer open.
 */
const SETTLE_HOLD = sql`
create function tollgate_settle_hold(operation jsonb) returns boolean language plpgsql as $$
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
begin
  update holds set state = 'settled' where id = operation->>'hold_id' and state = 'open'
  returning account_id, amount_nanos, key_id, budget_period, budget_period_start
       into settled_account, held, settled_key, settled_period, settled_start;
  if not found then
    return false;
  end if;
  update accounts set reserved_nanos = reserved_nanos - held, balance_nanos = balance_nanos - cost where id = settled_account;
  perform tollgate_settle_key_spend(settled_key, settled_period, settled_start, held, cost);
  if charge is not null then
    insert into ledger (account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens,
                        cache_write_input_tokens, output_tokens, reasoning_tokens, note, created_at)
    values (settled_account, 'charge', cost, charge->>'request_id', charge->>'key_id', charge->>'model',
            (charge->>'input_tokens')::integer, (charge->>'cached_input_tokens')::integer,
            (charge->>'cache_write_input_tokens')::integer, (charge->>'output_tokens')::integer,
            (charge->>'reasoning_tokens')::integer, null, created);
    if excess > 0 then
      insert into ledger (account_id, kind, amount_nanos, request_id, key_id, model, note, created_at)
      values (settled_account, 'excess', excess, charge->>'request_id', charge->>'key_id', charge->>'model', operation->>'excess_note', created);
    end if;
  end if;
  return true;
end $$`;

/** Running requests' metered usage and new expiry; holds no longer open are skipped. */
const CHECKPOINT_HOLDS = sql`
create function tollgate_checkpoint_holds(operation jsonb) returns boolean language plpgsql as $$
begin
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

/** One operation by its kind; {"ok": true, "value": …}. */
const APPLY_HOLD_OPERATION = sql`
create function tollgate_apply_hold_operation(operation jsonb) returns jsonb language plpgsql as $$
begin
  return jsonb_build_object('ok', true, 'value', case operation->>'kind'
    when 'open' then tollgate_open_hold(operation)
    when 'settle' then tollgate_settle_hold(operation)
    when 'checkpoint' then tollgate_checkpoint_holds(operation)
    else tollgate_unknown_hold_operation(operation)
  end);
end $$`;

const UNKNOWN_HOLD_OPERATION = sql`
create function tollgate_unknown_hold_operation(operation jsonb) returns boolean language plpgsql as $$
begin
  raise exception 'unknown hold operation %', operation->>'kind' using errcode = '22023';
end $$`;

/**
 * The batch, in one transaction. Rows are locked first in one global order (the holds it names by
 * id, then the accounts concerned by id), so two batches of different instances, or a batch and the
 * expiry sweep (which locks a hold, then its account), never wait on each other in a cycle. Then the
 * operations run in arrival order. With `isolate`, each runs in its own subtransaction and a
 * failure becomes its outcome {"ok": false, "code", "message"}; without it, a failure fails the
 * call (the caller then sends the batch again with `isolate`: subtransactions cost a multixact per
 * row they update, so they are paid only when an operation fails).
 */
const APPLY_HOLD_OPERATIONS = sql`
create function tollgate_apply_hold_operations(operations jsonb, isolate boolean) returns jsonb language plpgsql as $$
declare
  operation jsonb;
  outcome jsonb;
  outcomes jsonb[] := '{}';
begin
  perform 1 from holds
   where id in (select item->>'hold_id' from jsonb_array_elements(operations) as item where item->>'kind' = 'settle'
                union
                select checkpoint->>'hold_id' from jsonb_array_elements(operations) as item,
                       jsonb_array_elements(item->'checkpoints') as checkpoint where item->>'kind' = 'checkpoint')
   order by id for no key update;
  perform 1 from accounts
   where id in (select item->>'account_id' from jsonb_array_elements(operations) as item where item->>'kind' = 'open'
                union
                select holds.account_id from jsonb_array_elements(operations) as item
                  join holds on holds.id = item->>'hold_id' where item->>'kind' = 'settle')
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

export function holdBatchesMigration(engine: StoreEngine): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine !== 'postgres') return;
      for (const statement of [OPEN_HOLD, SETTLE_HOLD, CHECKPOINT_HOLDS, UNKNOWN_HOLD_OPERATION, APPLY_HOLD_OPERATION, APPLY_HOLD_OPERATIONS]) await statement.execute(db);
    },
  };
}
