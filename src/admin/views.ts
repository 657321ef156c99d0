/**
 * The JSON shapes of accounts, keys and usage for operators (CLI `--json`, admin HTTP routes):
 * snake_case, money as exact decimal USD strings, dates as ISO strings. A key's view never carries
 * its hash, and there is no field for the secret: only `createKey`'s caller ever holds that.
 */
import { formatUsd } from '../billing/money.js';
import type { ModelPrices } from '../billing/prices.js';
import { csvLine, toCsvValue } from './csv.js';
import type { AccountActivityRecord, AccountRecord, AdminTokenRecord, ApiKeyRecord, AuditEntry, LedgerEntry, RequestLogRecord } from '../store/store.js';
import { keyStatus } from './key-status.js';
import type { AccountUsageSummary, KeyDetails, UsageReport, UsageReportRow, UsageTotals } from './results.js';
import type { AccountActivityView, AccountUsageView, AccountView, KeyView, KeyDetailsView, UsageTotalsView, UsageReportView, AdminTokenView, LedgerEntryView, AuditEntryView, RequestLogView } from './view-shapes.js';

export type { AccountActivityView, AccountUsageView, AccountView, KeyView, KeyBudgetView, KeyBudgetUsageView, KeyDetailsView, UsageTotalsView, UsageRowView, UsageReportView, AdminTokenView, LedgerEntryView, AuditEntryView, RequestLogView } from './view-shapes.js';

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

/** An account in the sorted list: with its spend over the list's range and its last request. */
export function accountActivityView(account: AccountActivityRecord): AccountActivityView {
  return { ...accountView(account), spend_usd: formatUsd(account.spendNanos), last_used_at: account.lastUsedAt === null ? null : account.lastUsedAt.toISOString() };
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

export function accountUsageView(summary: AccountUsageSummary): AccountUsageView {
  return {
    from: summary.from?.toISOString() ?? null,
    to: summary.to?.toISOString() ?? null,
    top: summary.top.map(({ accountId, name, ...totals }) => ({ account_id: accountId, name, ...usageTotalsView(totals) })),
    other_accounts: summary.otherAccounts,
    others: usageTotalsView(summary.others),
    no_account: usageTotalsView(summary.noAccount),
    total: usageTotalsView(summary.total),
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

/** Never the hash; the secret exists only in `createAdminToken`'s answer. */
export function adminTokenView(token: AdminTokenRecord): AdminTokenView {
  return { id: token.id, name: token.name, role: token.role, prefix: token.prefix, disabled: token.disabled, created_at: token.createdAt.toISOString() };
}

export function ledgerEntryView(entry: LedgerEntry): LedgerEntryView {
  return {
    id: entry.id,
    kind: entry.kind,
    amount_usd: formatUsd(entry.amountNanos),
    request_id: entry.requestId,
    key_id: entry.keyId,
    model: entry.model,
    surface: entry.surface,
    note: entry.note,
    created_at: entry.createdAt.toISOString(),
  };
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

export function requestLogView(record: RequestLogRecord): RequestLogView {
  return {
    id: record.id,
    at: record.at.toISOString(),
    request_id: record.requestId,
    account_id: record.accountId,
    account_name: record.accountName,
    key_id: record.keyId,
    key_name: record.keyName,
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
  'account_name',
  'key_id',
  'key_name',
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

/** What a model bills each, beyond tokens, as exact USD decimal strings; a key is absent when the model has no such price. */
export interface UnitPricesView {
  /** Per 1M input tokens that are images. */
  image_input_per_million?: string;
  /** Per image, by tier (`<size>/<quality>`, `<size>`, `default`). */
  per_image?: Record<string, string>;
  per_audio_second?: string;
  per_million_characters?: string;
}

export function unitPricesView(prices: ModelPrices): UnitPricesView {
  return {
    ...(prices.imageInputPerMillion === undefined ? {} : { image_input_per_million: formatUsd(prices.imageInputPerMillion) }),
    ...(prices.perImage === undefined ? {} : { per_image: Object.fromEntries([...prices.perImage].map(([tier, nanos]) => [tier, formatUsd(nanos)])) }),
    ...(prices.perAudioSecond === undefined ? {} : { per_audio_second: formatUsd(prices.perAudioSecond) }),
    ...(prices.perMillionCharacters === undefined ? {} : { per_million_characters: formatUsd(prices.perMillionCharacters) }),
  };
}
