/**
 * The JSON shapes of accounts, keys and usage for operators (CLI `--json`, admin HTTP routes):
 * snake_case, money as exact decimal USD strings, dates as ISO strings. A key's view never carries
 * its hash, and there is no field for the secret: only `createKey`'s caller ever holds that.
 */
import { formatUsd } from '../billing/money.js';
import { csvLine, toCsvValue } from './csv.js';
import type { AccountRecord, AdminRole, AdminTokenRecord, ApiKeyRecord, AuditEntry, BudgetPeriod, KeyStatus, LedgerEntry, RequestLogRecord, UsageGrouping } from '../store/store.js';
import { keyStatus, type KeyDetails } from './keys.js';
import type { UsageReport, UsageReportRow, UsageTotals } from './usage.js';

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

/** The CSV columns of a usage export, after the group's own (named after the grouping). */
export const USAGE_CSV_COLUMNS = [
  'requests',
  'input_tokens',
  'cached_input_tokens',
  'cache_write_input_tokens',
  'output_tokens',
  'reasoning_tokens',
  'errors',
  'cost_usd',
  'excess_usd',
] as const satisfies readonly (keyof UsageTotalsView)[];

/** A usage report as CSV: the group (its column named after the grouping: day, hour, model, key) and its totals, no total row. */
export function usageCsv(view: UsageReportView): string {
  let text = csvLine([view.by, ...USAGE_CSV_COLUMNS]);
  for (const row of view.rows) text += csvLine([row.group, ...USAGE_CSV_COLUMNS.map((column) => toCsvValue(row[column]))]);
  return text;
}

export function accountView(account: AccountRecord): AccountView {
  return {
    id: account.id,
    name: account.name,
    balance_usd: formatUsd(account.balanceNanos),
    reserved_usd: formatUsd(account.reservedNanos),
    disabled: account.disabled,
    created_at: account.createdAt.toISOString(),
    low_balance_threshold_usd: account.lowBalanceThresholdNanos === null ? null : formatUsd(account.lowBalanceThresholdNanos),
  };
}

export function keyView(key: ApiKeyRecord, now: Date = new Date()): KeyView {
  return {
    id: key.id,
    account_id: key.accountId,
    name: key.name,
    prefix: key.prefix,
    models: key.models,
    requests_per_window: key.requestsPerWindow,
    tokens_per_minute: key.tokensPerMinute,
    expires_at: key.expiresAt?.toISOString() ?? null,
    disabled: key.disabled,
    status: keyStatus(key, now),
    budget: key.budget === undefined ? null : { period: key.budget.period, limit_usd: formatUsd(key.budget.limitNanos) },
    created_at: key.createdAt.toISOString(),
    deleted_at: key.deletedAt?.toISOString() ?? null,
  };
}

/** A key with what its budget has spent, holds and has left in the current period. */
export function keyDetailsView(details: KeyDetails, now: Date = new Date()): KeyDetailsView {
  const view = keyView(details.key, now);
  const usage = details.budgetUsage;
  if (view.budget === null || usage === undefined) return { ...view, budget: null };
  return {
    ...view,
    budget: {
      ...view.budget,
      period_start: usage.window.start.toISOString(),
      resets_at: usage.endsAt?.toISOString() ?? null,
      spent_usd: formatUsd(usage.spentNanos),
      reserved_usd: formatUsd(usage.reservedNanos),
      remaining_usd: formatUsd(usage.remainingNanos),
    },
  };
}

export function usageReportView(report: UsageReport): UsageReportView {
  return {
    account_id: report.accountId,
    from: report.from?.toISOString() ?? null,
    to: report.to?.toISOString() ?? null,
    by: report.by,
    rows: report.rows.map((row: UsageReportRow) => ({ group: row.group, ...usageTotalsView(row) })),
    total: usageTotalsView(report.total),
  };
}

function usageTotalsView(totals: UsageTotals): UsageTotalsView {
  return {
    requests: totals.requests,
    input_tokens: totals.inputTokens,
    cached_input_tokens: totals.cachedInputTokens,
    cache_write_input_tokens: totals.cacheWriteInputTokens ?? 0,
    output_tokens: totals.outputTokens,
    reasoning_tokens: totals.reasoningTokens,
    errors: totals.errors,
    cost_usd: formatUsd(totals.costNanos),
    excess_usd: formatUsd(totals.excessNanos),
  };
}

export interface AdminTokenView {
  id: string;
  name: string | null;
  role: AdminRole;
  prefix: string;
  disabled: boolean;
  created_at: string;
}

/** Never the hash; the secret exists only in `createAdminToken`'s answer. */
export function adminTokenView(token: AdminTokenRecord): AdminTokenView {
  return { id: token.id, name: token.name, role: token.role, prefix: token.prefix, disabled: token.disabled, created_at: token.createdAt.toISOString() };
}

export interface LedgerEntryView {
  id: number;
  kind: LedgerEntry['kind'];
  amount_usd: string;
  request_id: string | null;
  key_id: string | null;
  model: string | null;
  note: string | null;
  created_at: string;
}

export function ledgerEntryView(entry: LedgerEntry): LedgerEntryView {
  return {
    id: entry.id,
    kind: entry.kind,
    amount_usd: formatUsd(entry.amountNanos),
    request_id: entry.requestId,
    key_id: entry.keyId,
    model: entry.model,
    note: entry.note,
    created_at: entry.createdAt.toISOString(),
  };
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

export function auditEntryView(entry: AuditEntry): AuditEntryView {
  return {
    id: entry.id,
    at: entry.at.toISOString(),
    admin_token_id: entry.adminTokenId,
    action: entry.action,
    target_type: entry.targetType,
    target_id: entry.targetId,
    before: entry.before,
    after: entry.after,
  };
}

export interface RequestLogView {
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
  /** Only for models whose catalog entry turns on `log_bodies`, cut at its size cap. */
  request_body: string | null;
  response_body: string | null;
}

export function requestLogView(record: RequestLogRecord): RequestLogView {
  return {
    id: record.id,
    at: record.at.toISOString(),
    request_id: record.requestId,
    account_id: record.accountId,
    key_id: record.keyId,
    surface: record.surface,
    model: record.model,
    target: record.target,
    status: record.status,
    error_code: record.errorCode,
    stream: record.stream,
    latency_ms: record.latencyMs,
    first_byte_ms: record.firstByteMs,
    input_tokens: record.inputTokens,
    cached_input_tokens: record.cachedInputTokens,
    cache_write_input_tokens: record.cacheWriteInputTokens ?? 0,
    output_tokens: record.outputTokens,
    reasoning_tokens: record.reasoningTokens,
    cost_usd: formatUsd(record.costNanos),
    request_body: record.requestBody,
    response_body: record.responseBody,
  };
}

/** The CSV columns of a request log export: every field but the bodies. */
export const REQUEST_LOG_CSV_COLUMNS = [
  'at',
  'request_id',
  'account_id',
  'key_id',
  'surface',
  'model',
  'target',
  'status',
  'error_code',
  'stream',
  'latency_ms',
  'first_byte_ms',
  'input_tokens',
  'cached_input_tokens',
  'cache_write_input_tokens',
  'output_tokens',
  'reasoning_tokens',
  'cost_usd',
] as const satisfies readonly (keyof RequestLogView)[];
