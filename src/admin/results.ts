/**
 * What the admin services hand back beyond the store's records: a key with what its budget has
 * left (keys.ts) and a usage report (usage.ts). Types only, so that views.ts can shape them
 * without importing the services, which import views.ts for their audit rows (no import cycles:
 * docs/architecture.md, Import direction).
 */
import type { ApiKeyRecord, BudgetWindow, UsageGrouping, UsageGroupRow } from '../store/store.js';

/** A key's budget in its current period. */
export interface KeyBudgetUsage {
  window: BudgetWindow;
  /** When the next period starts (null for a total budget, which never resets). */
  endsAt: Date | null;
  spentNanos: bigint;
  reservedNanos: bigint;
  /** The limit less spent and reserved, never below zero. */
  remainingNanos: bigint;
}

export interface KeyDetails {
  key: ApiKeyRecord;
  /** Present when the key has a budget. */
  budgetUsage?: KeyBudgetUsage;
}

export interface UsageReportRow extends UsageGroupRow {
  /** Logged requests of the group that ended with an error code. */
  errors: number;
}

export type UsageTotals = Omit<UsageReportRow, 'group'>;

export interface UsageReport {
  /** The resolved account id, or null for every account. */
  accountId: string | null;
  from: Date | null;
  to: Date | null;
  by: UsageGrouping;
  /** One row per group with any charge or error, sorted by group (time order for day and hour). */
  rows: UsageReportRow[];
  total: UsageTotals;
}
