/**
 * The JSON shapes of the admin API's answers (and of the console's, which shows them): types
 * only, with no code, so that the web console (console/src/types.ts) reads the very same types the
 * server writes. The functions that build them are in views.ts. Money is a decimal USD string,
 * times ISO 8601 strings in UTC.
 */
import type { AdminRole, BudgetPeriod, KeyStatus, LedgerEntry, UsageGrouping } from '../store/store.js';

export interface AccountView {
  id: string;
  name: string;
  balance_usd: string;
  reserved_usd: string;
  disabled: boolean;
  created_at: string;
  /** A `balance.low` alert fires when balance − reserved drops below it; null: no alert. */
  low_balance_threshold_usd: string | null;
}

/** GET /admin/v1/accounts: an account with its spend over the list's range and its last request. */
export interface AccountActivityView extends AccountView {
  spend_usd: string;
  /** Its latest request in the log; null when the log holds none. */
  last_used_at: string | null;
}

export interface KeyView {
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
  /** The spend limit, or null for none. */
  budget: KeyBudgetView | null;
  created_at: string;
  deleted_at: string | null;
}

export interface KeyBudgetView {
  period: BudgetPeriod;
  limit_usd: string;
}

/** A key's budget in its current period (calendar UTC; a total budget's period never ends). */
export interface KeyBudgetUsageView extends KeyBudgetView {
  period_start: string;
  /** When the budget starts afresh; null for a total budget. */
  resets_at: string | null;
  spent_usd: string;
  /** Held by the key's requests still running. */
  reserved_usd: string;
  remaining_usd: string;
}

export interface KeyDetailsView extends Omit<KeyView, 'budget'> {
  budget: KeyBudgetUsageView | null;
}

export interface UsageTotalsView {
  requests: number;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  /** Logged requests that ended with an error code (from the request log). */
  errors: number;
  cost_usd: string;
  /** Reported by upstreams beyond the holds: recorded, not billed. */
  excess_usd: string;
}

export interface UsageRowView extends UsageTotalsView {
  /** The UTC day or hour (its start, ISO 8601), the model id or the key id. */
  group: string;
}

export interface UsageReportView {
  account_id: string | null;
  from: string | null;
  to: string | null;
  by: UsageGrouping;
  rows: UsageRowView[];
  total: UsageTotalsView;
}

/** Usage by account: the top accounts by spend with their names, the rest summed (admin/usage.ts). */
export interface AccountUsageView {
  from: string | null;
  to: string | null;
  top: Array<UsageTotalsView & { account_id: string; name: string }>;
  other_accounts: number;
  others: UsageTotalsView;
  no_account: UsageTotalsView;
  total: UsageTotalsView;
}

export interface AdminTokenView {
  id: string;
  name: string | null;
  role: AdminRole;
  prefix: string;
  disabled: boolean;
  created_at: string;
}

export interface LedgerEntryView {
  id: number;
  kind: LedgerEntry['kind'];
  amount_usd: string;
  request_id: string | null;
  key_id: string | null;
  model: string | null;
  /** The endpoint a charge or excess paid for; null for credits, debits and charges from before it was kept. */
  surface: string | null;
  note: string | null;
  created_at: string;
}

export interface AuditEntryView {
  id: number;
  at: string;
  admin_token_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
}

export interface RequestLogView {
  id: number;
  at: string;
  request_id: string;
  /** Null for a request refused before its key was known (a 401). */
  account_id: string | null;
  /** The account's name now (null when the row has no account, or it is gone). */
  account_name: string | null;
  key_id: string | null;
  /** The key's name now (null when the row has no key, or the key has no name). */
  key_name: string | null;
  /** The endpoint; null for a `/v1` route other than the creation routes (an unknown one's 404, say). */
  surface: string | null;
  /** Null when refused before a catalog model was named. */
  model: string | null;
  /** The target that answered; when none did, the last one tried that failed. */
  target: string | null;
  status: number;
  /** The error body's `code`, or its `type` where it has none (an empty code, Anthropic's shape). */
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
  /** Only for models whose catalog entry turns on `log_bodies`, cut at its size cap. */
  request_body: string | null;
  response_body: string | null;
}
