/**
 * The tables as Kysely sees them. The same migration creates them on SQLite and PostgreSQL, so the
 * types describe what either driver hands back: 64-bit columns (`bigint` in SQL) come back as
 * `bigint` on both (better-sqlite3 with safe integers, pg with an int8 parser), while 32-bit columns
 * (`integer`) come back as `bigint` from SQLite and `number` from pg. Rows are still decoded by
 * row-decoding.ts before they leave the store.
 *
 * Times are epoch milliseconds in `bigint` columns: the one representation that sorts, compares
 * and round-trips identically on both engines. Booleans are `integer` 0/1 for the same reason
 * (SQLite has no boolean type and better-sqlite3 cannot bind one).
 */
import type { ColumnType, Generated } from 'kysely';
import type { SliceState } from './slice-records.js';
import type { AdminRole, BudgetPeriod, ConsoleSessionKind, Store } from './store.js';

export type StoreEngine = Store['engine'];

/** A 64-bit column: read as bigint, written as bigint (or a safe number). */
type Int64 = ColumnType<bigint, bigint | number, bigint | number>;
/** A 32-bit column: the drivers disagree on the JS type they return. */
type Int32 = ColumnType<bigint | number, number, number>;
type NullableInt32 = ColumnType<bigint | number | null, number | null, number | null>;
type NullableInt64 = ColumnType<bigint | null, bigint | number | null, bigint | number | null>;
/** A nullable column added by a later migration: inserts that do not name it leave it null. */
type NullableText = ColumnType<string | null, string | null | undefined, string | null>;

export interface AccountsTable {
  id: string;
  name: string;
  balance_nanos: Int64;
  reserved_nanos: Int64;
  /** 0 or 1. */
  disabled: Int32;
  created_at: Int64;
  /** Migration 0009: a `balance.low` alert fires when balance − reserved drops below it; null: none. */
  low_balance_threshold_nanos: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  /** Migration 0015: the part of `reserved_nanos` that the account's quota slices make up. */
  sliced_nanos: ColumnType<bigint, bigint | number | undefined, bigint | number>;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  hash: string;
  /** A JSON array of model ids, or null for every model. */
  models: string | null;
  requests_per_window: NullableInt32;
  tokens_per_minute: NullableInt32;
  expires_at: NullableInt64;
  disabled: Int32;
  created_at: Int64;
  /** The key's spend limit and its period (migration 0006): both null, or both set. */
  budget_nanos: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  budget_period: ColumnType<BudgetPeriod | null, BudgetPeriod | null | undefined, BudgetPeriod | null>;
  /** When the key was deleted (migration 0006); null while it is not. */
  deleted_at: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
}

export type HoldState = 'open' | 'settled' | 'expired';

export interface HoldsTable {
  id: string;
  account_id: string;
  key_id: string;
  request_id: string;
  amount_nanos: Int64;
  state: HoldState;
  expires_at: Int64;
  created_at: Int64;
  /** Catalog model id (migration 0003): prices what an expired hold settles. */
  model: string | null;
  /** Usage metered so far by the running request (migration 0003); an expired hold settles it. */
  checkpoint_cost_nanos: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  checkpoint_input_tokens: ColumnType<bigint | number, number | undefined, number>;
  checkpoint_cached_input_tokens: ColumnType<bigint | number, number | undefined, number>;
  checkpoint_output_tokens: ColumnType<bigint | number, number | undefined, number>;
  checkpoint_reasoning_tokens: ColumnType<bigint | number, number | undefined, number>;
  /** The key budget period the hold counts against (migration 0006); null when its key had no budget. */
  budget_period: ColumnType<BudgetPeriod | null, BudgetPeriod | null | undefined, BudgetPeriod | null>;
  budget_period_start: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  /** The `/v1` endpoint (client surface) the hold was opened for (migration 0012); null before it. */
  surface: NullableText;
  /** The quota slice the hold was admitted from (migration 0015); null for a hold opened by its own guarded UPDATE. */
  slice_id: NullableText;
}

/**
 * A quota slice (migration 0015): part of an account's balance reserved by one process (`owner`),
 * which admits holds from it in memory until `lease_until`, renewed while it runs. `amount_nanos`
 * is counted in the account's `reserved_nanos` (and `sliced_nanos`): what is still reserved for
 * holds admitted from it and not yet written as rows, plus what it has not admitted yet.
 */
export interface AccountSlicesTable {
  id: string;
  account_id: string;
  owner: string;
  amount_nanos: Int64;
  /** `active` admits; `recalled`: another process asks for its unused part; `closed`: its unused part is back. */
  state: SliceState;
  lease_until: Int64;
  created_at: Int64;
}

/**
 * A key's spend per budget period (migration 0006): one row per (key, period kind, period start),
 * so a new day, week or month is simply a new row and nothing has to reset them. `spent_nanos` is
 * what settled there, `reserved_nanos` what the key's open holds there reserve.
 */
export interface KeySpendTable {
  key_id: string;
  period: BudgetPeriod;
  period_start: Int64;
  spent_nanos: Int64;
  reserved_nanos: Int64;
}

/** `excess` (migration 0003): cost reported beyond a hold, recorded and never debited. */
export type LedgerKind = 'credit' | 'charge' | 'excess' | 'debit';

export interface LedgerTable {
  id: Generated<bigint | number>;
  account_id: string;
  kind: LedgerKind;
  amount_nanos: Int64;
  request_id: string | null;
  key_id: string | null;
  model: string | null;
  input_tokens: Int32;
  cached_input_tokens: Int32;
  /** Added by migration 0004; part of input_tokens. */
  cache_write_input_tokens: Int32;
  output_tokens: Int32;
  reasoning_tokens: Int32;
  note: string | null;
  created_at: Int64;
  /**
   * The endpoint a charge or excess paid for, copied from its hold (migration 0012); null on credits
   * and debits, and on rows written before that migration.
   */
  surface: NullableText;
}

export interface RevisionTable {
  /** Always 1: the table has exactly one row. */
  id: Int32;
  value: Int64;
}

/** Responses kept for `GET /v1/responses/{id}` and `previous_response_id` (migration 0002). */
export interface ResponsesTable {
  id: string;
  account_id: string;
  /** The response object as sent to the client, as JSON text. */
  response: string;
  /** The expanded conversation input (Responses input items with ids), as a JSON array. */
  input_items: string;
  created_at: Int64;
}

/** Running gateway instances, refreshed by their heartbeat (migration 0002). */
export interface InstancesTable {
  id: string;
  /** 0 or 1. */
  shared_limits: Int32;
  last_seen_at: Int64;
}

/** Tokens of the admin API (migration 0005); like API keys, only their hash is kept. */
export interface AdminTokensTable {
  id: string;
  name: string | null;
  role: AdminRole;
  prefix: string;
  hash: string;
  disabled: Int32;
  created_at: Int64;
}

/** Append-only record of admin mutations (migration 0005); before/after are JSON text. */
export interface AuditLogTable {
  id: Generated<bigint | number>;
  at: Int64;
  admin_token_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  before: string | null;
  after: string | null;
}

/** One row per routed `/v1` request (migration 0007), written in batches; see request-log-queries.ts. */
export interface RequestLogTable {
  id: Generated<bigint | number>;
  at: Int64;
  request_id: string;
  account_id: string;
  key_id: string;
  surface: string;
  model: string;
  target: string | null;
  status: Int32;
  error_code: string | null;
  /** 0 or 1. */
  stream: Int32;
  latency_ms: Int32;
  first_byte_ms: NullableInt32;
  input_tokens: Int32;
  cached_input_tokens: Int32;
  cache_write_input_tokens: Int32;
  output_tokens: Int32;
  reasoning_tokens: Int32;
  cost_nanos: Int64;
  /** Only for models with `log_bodies`, cut at its `max_bytes`. */
  request_body: string | null;
  response_body: string | null;
}

/**
 * A condition that has fired (migration 0009): while the row exists it does not fire again, and
 * its checker deletes the row when the condition clears (re-arms). The primary key is what makes
 * two instances that see the same crossing raise one event.
 */
export interface AlertClaimsTable {
  /** The event type, e.g. `balance.low`. */
  kind: string;
  /** What crossed: an account id, a key id. */
  subject_id: string;
  /** '' or a budget period's start: a condition per period re-arms with the next period. */
  scope: string;
  claimed_at: Int64;
}

export type AlertDeliveryState = 'pending' | 'delivered' | 'abandoned';

/** One event for one webhook (migration 0009), delivered by the background deliverer. */
export interface AlertOutboxTable {
  id: Generated<bigint | number>;
  /** The idempotency id the receiver sees, the same on every attempt. */
  event_id: string;
  event_type: string;
  /** Which configured webhook (a hash of its URL, so URLs with secrets stay out of the database). */
  webhook_id: string;
  /** The exact JSON body sent on every attempt. */
  body: string;
  state: ColumnType<AlertDeliveryState, AlertDeliveryState | undefined, AlertDeliveryState>;
  attempts: ColumnType<bigint | number, number | undefined, number>;
  /** When it is due; while an attempt runs, when that attempt's lease ends. */
  next_attempt_at: Int64;
  created_at: Int64;
  finished_at: NullableInt64;
  last_error: string | null;
}

/** Web console sessions (migration 0010): the SHA-256 of the session id, never the id itself. */
export interface ConsoleSessionsTable {
  hash: string;
  kind: ConsoleSessionKind;
  /** The admin token's id (kind `admin`) or the API key's id (kind `key`). */
  subject_id: string;
  created_at: Int64;
  expires_at: Int64;
}

/**
 * A target (or provider) out of rotation in one process (migration 0013): opened when the process
 * takes it out, closed (`up_at`) when the same process sees it answer again.
 */
export interface TargetRotationsTable {
  id: Generated<bigint | number>;
  /** `provider/model`, or the provider's name with scope `provider`. */
  target: string;
  /** `target`, or `provider` when the provider refused our credentials. */
  scope: string;
  provider: string;
  /** The process that saw it (host:pid). */
  instance: string;
  down_at: Int64;
  up_at: NullableInt64;
  /** The kind of upstream failure that took it out (`status`, `network`, `timeout`, `credentials`…). */
  failure_kind: string | null;
  /** The upstream's HTTP status, when it answered. */
  failure_status: NullableInt32;
  cooling_until: NullableInt64;
}

/** Versions of the runtime catalog (migration 0014): the newest row is the catalog served. */
export interface CatalogVersionsTable {
  id: Int64;
  /** The catalog document as JSON, upstream secrets replaced by a marker. */
  document: string;
  /** Provider name → its sealed upstream secret, as JSON; null when none was entered. */
  secrets: string | null;
  note: string | null;
  admin_token_id: string | null;
  created_at: Int64;
}

export interface Database {
  catalog_versions: CatalogVersionsTable;
  admin_tokens: AdminTokensTable;
  console_sessions: ConsoleSessionsTable;
  audit_log: AuditLogTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  holds: HoldsTable;
  account_slices: AccountSlicesTable;
  key_spend: KeySpendTable;
  ledger: LedgerTable;
  revision: RevisionTable;
  responses: ResponsesTable;
  instances: InstancesTable;
  request_log: RequestLogTable;
  alert_claims: AlertClaimsTable;
  alert_outbox: AlertOutboxTable;
  target_rotations: TargetRotationsTable;
}
