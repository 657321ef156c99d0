/**
 * The usage report, one for the CLI (`tollgate usage`) and the admin API (`/admin/v1/usage`), so
 * the two cannot disagree: per UTC day or hour, model, key, account or endpoint, over a time range, for one
 * account or all of them. Requests, tokens, cost and excess come from the ledger (exactly what was
 * billed; `requests` counts charges), errors from the request log (requests that ended with an
 * error code). By endpoint, a charge counts under the surface its hold was opened for (`unknown`
 * when it was billed before the ledger kept it), a logged error under its route's surface.
 */
import type { AccountStore, OperationsStore, UsageGrouping, UsageGroupRow } from '../store/store.js';
import { requireAccount } from './accounts.js';
import { requireOrderedRange, requireValidDate } from './input.js';
import type { AccountUsageSummary, UsageReport, UsageReportRow, UsageTotals } from './results.js';

/** Every grouping, in the order they are offered (the API's enum, the CLI's choices). */
export const USAGE_GROUPINGS = ['day', 'hour', 'model', 'key', 'account', 'endpoint'] as const satisfies readonly UsageGrouping[];

export interface UsageFilter {
  /** Account id or name; absent means every account. */
  accountRef?: string;
  /** One key's usage only (a key holder's own, in the console). */
  keyId?: string;
  /** Only usage at or after this instant. */
  from?: Date;
  /** Only usage before this instant. */
  to?: Date;
  /** Grouping; `model` when absent. */
  by?: UsageGrouping;
  /** How `from` and `to` are called where they came from (`--since`, `--until` in the CLI). */
  names?: readonly [string, string];
}

export async function usageReport(store: AccountStore & OperationsStore, filter: UsageFilter = {}): Promise<UsageReport> {
  const [fromName, toName] = filter.names ?? ['from', 'to'];
  const from = filter.from === undefined ? undefined : requireValidDate(filter.from, fromName);
  const to = filter.to === undefined ? undefined : requireValidDate(filter.to, toName);
  requireOrderedRange(from, to, [fromName, toName]);
  const by = filter.by ?? 'model';
  const accountId = filter.accountRef === undefined ? undefined : (await requireAccount(store, filter.accountRef)).id;
  const range = { ...(accountId === undefined ? {} : { accountId }), ...(filter.keyId === undefined ? {} : { keyId: filter.keyId }), ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
  const [charged, failed] = await Promise.all([store.usageBy(by, range), store.requestErrorsBy(by, range)]);
  const rows = mergeErrors(charged, failed);
  return { accountId: accountId ?? null, from: from ?? null, to: to ?? null, by, rows, total: sumRows(rows) };
}

function mergeErrors(charged: readonly UsageGroupRow[], failed: readonly { group: string; errors: number }[]): UsageReportRow[] {
  const rows = new Map<string, UsageReportRow>(charged.map((row) => [row.group, { ...row, errors: 0 }]));
  for (const { group, errors } of failed) {
    const row = rows.get(group) ?? { group, ...emptyTotals() };
    rows.set(group, { ...row, errors: row.errors + errors });
  }
  return [...rows.values()].sort((left, right) => (left.group < right.group ? -1 : left.group > right.group ? 1 : 0));
}

function emptyTotals(): UsageTotals {
  return { requests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 0, reasoningTokens: 0, errors: 0, costNanos: 0n, excessNanos: 0n };
}

function sumRows(rows: readonly UsageReportRow[]): UsageTotals {
  const total = emptyTotals();
  for (const row of rows) {
    total.requests += row.requests;
    total.inputTokens += row.inputTokens;
    total.cachedInputTokens += row.cachedInputTokens;
    total.cacheWriteInputTokens = (total.cacheWriteInputTokens ?? 0) + (row.cacheWriteInputTokens ?? 0);
    total.outputTokens += row.outputTokens;
    total.reasoningTokens += row.reasoningTokens;
    total.errors += row.errors;
    total.costNanos += row.costNanos;
    total.excessNanos += row.excessNanos;
  }
  return total;
}

/** The accounts a summary by account names at most (the rest are summed in one row). */
export const MAX_TOP_ACCOUNTS = 100;

export async function accountUsageSummary(store: AccountStore & OperationsStore, filter: { from?: Date; to?: Date; top: number }): Promise<AccountUsageSummary> {
  const report = await usageReport(store, { ...(filter.from === undefined ? {} : { from: filter.from }), ...(filter.to === undefined ? {} : { to: filter.to }), by: 'account' });
  const accounts = report.rows.filter((row) => row.group !== '').sort(bySpend);
  const top = Math.min(Math.max(filter.top, 1), MAX_TOP_ACCOUNTS);
  const shown = accounts.slice(0, top);
  const records = await Promise.all(shown.map((row) => store.findAccount(row.group)));
  const rows = shown.map(({ group, ...totals }, index) => ({ accountId: group, name: records[index]?.name ?? group, ...totals }));
  const rest = accounts.slice(top);
  const noAccount = report.rows.find((row) => row.group === '');
  return {
    from: report.from,
    to: report.to,
    top: rows,
    otherAccounts: rest.length,
    others: sumRows(rest),
    noAccount: noAccount === undefined ? emptyTotals() : sumRows([noAccount]),
    total: report.total,
  };
}

/** Highest spend first, then most requests, then by id (a stable order for equal rows). */
function bySpend(left: UsageReportRow, right: UsageReportRow): number {
  if (left.costNanos !== right.costNanos) return left.costNanos > right.costNanos ? -1 : 1;
  if (left.requests !== right.requests) return right.requests - left.requests;
  if (left.errors !== right.errors) return right.errors - left.errors;
  return left.group < right.group ? -1 : left.group > right.group ? 1 : 0;
}
