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

export interface AccountUsageRow extends UsageTotals {
  accountId: string;
  name: string;
}

/**
 * Usage by account for the console's overview, computed here rather than in the browser so it
 * holds at any number of accounts: the `top` accounts by spend (then by requests), with their
 * names; every other account summed in one row; the errors of requests refused before a key was
 * known (no account) in one more.
 */
export interface AccountUsageSummary {
  from: Date | null;
  to: Date | null;
  top: AccountUsageRow[];
  /** How many accounts `others` sums (0: none left over). */
  otherAccounts: number;
  others: UsageTotals;
  noAccount: UsageTotals;
  total: UsageTotals;
}
