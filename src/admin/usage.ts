/**
 * Usage report: charges grouped by model, with a total row, for one account or all of them, and
 * the excess upstreams reported beyond the holds (recorded, not billed).
 */
import type { Store, UsageRow } from '../store/store.js';
import { requireAccount } from './accounts.js';
import { requireValidDate } from './input.js';

export interface UsageFilter {
  /** Account id or name; absent means every account. */
  accountRef?: string;
  /** Only charges at or after this instant. */
  since?: Date;
}

export type UsageTotals = Omit<UsageRow, 'model'>;

export interface UsageReport {
  /** The resolved account id, or null for every account. */
  accountId: string | null;
  since: Date | null;
  /** One row per model, sorted by model id. */
  rows: UsageRow[];
  total: UsageTotals;
}

export async function usageReport(store: Store, filter: UsageFilter = {}): Promise<UsageReport> {
  const since = filter.since === undefined ? undefined : requireValidDate(filter.since, 'since');
  const accountId = filter.accountRef === undefined ? undefined : (await requireAccount(store, filter.accountRef)).id;
  const rows = await store.usageReport({ accountId, since });
  const sorted = [...rows].sort((left, right) => (left.model < right.model ? -1 : left.model > right.model ? 1 : 0));
  return { accountId: accountId ?? null, since: since ?? null, rows: sorted, total: sumRows(sorted) };
}

function sumRows(rows: UsageRow[]): UsageTotals {
  const total: UsageTotals = { requests: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 0, reasoningTokens: 0, costNanos: 0n, excessNanos: 0n };
  for (const row of rows) {
    total.requests += row.requests;
    total.inputTokens += row.inputTokens;
    total.cachedInputTokens += row.cachedInputTokens;
    total.cacheWriteInputTokens = (total.cacheWriteInputTokens ?? 0) + (row.cacheWriteInputTokens ?? 0);
    total.outputTokens += row.outputTokens;
    total.reasoningTokens += row.reasoningTokens;
    total.costNanos += row.costNanos;
    total.excessNanos += row.excessNanos;
  }
  return total;
}
