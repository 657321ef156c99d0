/**
 * One key's usage per UTC hour or day, for the key holder's console (`/console/api/self/usage`).
 * The ledger's usage report (usage.ts) groups by account at most, so a key's series is read from
 * the request log, filtered to the key by the server: `requests` counts the logged requests that
 * were charged, `errors` those that ended with an error code, cost is what they were charged.
 * With the request log off (`log.enabled: false`) it is empty. Rows are read a page at a time.
 */
import type { Store } from '../store/store.js';
import { everyRequestLogRow } from './request-log.js';
import type { UsageReport, UsageReportRow } from './usage.js';

const BUCKET_MILLISECONDS = { day: 86_400_000, hour: 3_600_000 } as const;

export interface KeyUsageFilter {
  keyId: string;
  accountId: string;
  from?: Date;
  to?: Date;
  by: 'hour' | 'day';
}

export async function keyUsageReport(store: Store, filter: KeyUsageFilter): Promise<UsageReport> {
  const length = BUCKET_MILLISECONDS[filter.by];
  const buckets = new Map<number, UsageReportRow>();
  const rows = everyRequestLogRow(store, {
    keyId: filter.keyId,
    accountRef: filter.accountId,
    ...(filter.from === undefined ? {} : { from: filter.from }),
    ...(filter.to === undefined ? {} : { to: filter.to }),
  });
  for await (const record of rows) {
    const start = Math.floor(record.at.getTime() / length) * length;
    const row = buckets.get(start) ?? emptyRow(new Date(start).toISOString());
    if (record.costNanos > 0n) row.requests += 1;
    if (record.errorCode !== null) row.errors += 1;
    row.inputTokens += record.inputTokens;
    row.cachedInputTokens += record.cachedInputTokens;
    row.cacheWriteInputTokens = (row.cacheWriteInputTokens ?? 0) + (record.cacheWriteInputTokens ?? 0);
    row.outputTokens += record.outputTokens;
    row.reasoningTokens += record.reasoningTokens;
    row.costNanos += record.costNanos;
    buckets.set(start, row);
  }
  const sorted = [...buckets.entries()].sort(([left], [right]) => left - right).map(([, row]) => row);
  const total = emptyRow('');
  for (const row of sorted) {
    total.requests += row.requests;
    total.errors += row.errors;
    total.inputTokens += row.inputTokens;
    total.cachedInputTokens += row.cachedInputTokens;
    total.cacheWriteInputTokens = (total.cacheWriteInputTokens ?? 0) + (row.cacheWriteInputTokens ?? 0);
    total.outputTokens += row.outputTokens;
    total.reasoningTokens += row.reasoningTokens;
    total.costNanos += row.costNanos;
  }
  const { group: _group, ...totals } = total;
  return { accountId: filter.accountId, from: filter.from ?? null, to: filter.to ?? null, by: filter.by, rows: sorted, total: totals };
}

function emptyRow(group: string): UsageReportRow {
  return { group, requests: 0, errors: 0, inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 0, reasoningTokens: 0, costNanos: 0n, excessNanos: 0n };
}
