/**
 * The JSON shapes of accounts, keys and usage for operators (CLI `--json`, admin HTTP routes):
 * snake_case, money as exact decimal USD strings, dates as ISO strings. A key's view never carries
 * its hash, and there is no field for the secret: only `createKey`'s caller ever holds that.
 */
import { formatUsd } from '../billing/money.js';
import type { AccountRecord, AdminRole, AdminTokenRecord, ApiKeyRecord, AuditEntry, LedgerEntry, UsageRow } from '../store/store.js';
import { keyStatus } from './keys.js';
import type { UsageReport, UsageTotals } from './usage.js';

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
  status: 'active' | 'disabled' | 'expired';
  created_at: string;
}

export interface UsageTotalsView {
  requests: number;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cost_usd: string;
  /** Reported by upstreams beyond the holds: recorded, not billed. */
  excess_usd: string;
}

export interface UsageReportView {
  account_id: string | null;
  since: string | null;
  models: (UsageTotalsView & { model: string })[];
  total: UsageTotalsView;
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
    created_at: key.createdAt.toISOString(),
  };
}

export function usageReportView(report: UsageReport): UsageReportView {
  return {
    account_id: report.accountId,
    since: report.since?.toISOString() ?? null,
    models: report.rows.map((row: UsageRow) => ({ model: row.model, ...usageTotalsView(row) })),
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
