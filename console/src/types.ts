/**
 * The shapes the console reads: those of the admin API (its OpenAPI document at
 * /admin/v1/openapi.json names them Account, LedgerEntry, AdminToken, AuditEntry) and of the
 * console's own routes (/console/api/session, /console/api/self). Money is a decimal USD string,
 * times are ISO 8601 strings in UTC.
 */

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface Account {
  id: string;
  name: string;
  balance_usd: string;
  reserved_usd: string;
  disabled: boolean;
  created_at: string;
  low_balance_threshold_usd?: string | null;
}

export interface LedgerEntry {
  id: number;
  kind: 'credit' | 'charge' | 'excess' | 'debit';
  amount_usd: string;
  request_id: string | null;
  key_id: string | null;
  model: string | null;
  note: string | null;
  created_at: string;
}

export type AdminRole = 'owner' | 'operator' | 'viewer';

export interface AdminToken {
  id: string;
  name: string | null;
  role: AdminRole;
  prefix: string;
  disabled: boolean;
  created_at: string;
}

export interface AuditEntry {
  id: number;
  at: string;
  admin_token_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
}

export interface Key {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  models: string[] | null;
  requests_per_window: number | null;
  tokens_per_minute: number | null;
  expires_at: string | null;
  disabled: boolean;
  status: KeyStatus;
  budget?: KeyBudget | null;
  created_at: string;
  deleted_at?: string | null;
}

export type KeyStatus = 'active' | 'disabled' | 'expired' | 'deleted';
export type BudgetPeriod = 'total' | 'day' | 'week' | 'month';

export interface KeyBudget {
  period: BudgetPeriod;
  limit_usd: string;
}

/** GET /admin/v1/keys/{key}: the key with its budget's current period. */
export interface KeyDetails extends Key {
  budget: (KeyBudget & { period_start: string; resets_at: string | null; spent_usd: string; reserved_usd: string; remaining_usd: string }) | null;
}

/** The settings a key is created with or changed through: absent keeps, null clears. */
export interface KeySettings {
  name?: string | null;
  models?: string[] | null;
  requests_per_window?: number | null;
  tokens_per_minute?: number | null;
  expires_at?: string | null;
  budget?: { limit_usd: string; period?: BudgetPeriod } | null;
}

export interface RequestLogEntry {
  id: number;
  at: string;
  request_id: string;
  account_id: string;
  key_id: string;
  surface: string;
  model: string;
  target: string | null;
  status: number;
  error_code: string | null;
  stream: boolean;
  latency_ms: number;
  first_byte_ms: number | null;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost_usd: string;
  request_body: string | null;
  response_body: string | null;
}

export type UsageGrouping = 'day' | 'hour' | 'model' | 'key';

export interface UsageTotals {
  requests: number;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  errors: number;
  cost_usd: string;
  excess_usd: string;
}

export interface UsageReport {
  account_id: string | null;
  from: string | null;
  to: string | null;
  by: UsageGrouping;
  rows: Array<UsageTotals & { group: string }>;
  total: UsageTotals;
}

export interface CatalogModel {
  id: string;
  enabled: boolean;
  prices: { input_usd: string; cached_input_usd: string; cache_write_usd: string; output_usd: string };
  reasoning_efforts: string[];
  max_output_tokens: number;
  hosted_tools: string;
  targets: Array<{ target: string; priority: number; weight: number }>;
}

export interface CatalogTarget {
  target: string;
  provider: string;
  provider_type: string;
  model: string;
  status: 'healthy' | 'cooling_down' | 'recovering';
  cooling_until: string | null;
  cause: 'failures' | 'credentials' | null;
  consecutive_failures: number;
}

export interface Catalog {
  models: CatalogModel[];
  targets: CatalogTarget[];
  observed_at: string;
}

export type Session =
  | { kind: 'admin'; expires_at: string; admin_token: AdminToken }
  | { kind: 'key'; expires_at: string; key: Key; account: Account };

export type AdminSession = Extract<Session, { kind: 'admin' }>;
export type KeySession = Extract<Session, { kind: 'key' }>;

export interface SelfView {
  account: Account;
  key: KeyDetails;
}

export interface SelfModel {
  id: string;
  prices_usd_per_million_tokens: { input: string; cached_input: string; cache_write: string; output: string };
  reasoning_efforts: string[];
  max_output_tokens: number;
}
