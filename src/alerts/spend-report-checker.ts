/**
 * `spend.report`: once each UTC day (or week, from Monday 00:00 UTC) has ended, what it cost: the
 * total, how many charged requests and accounts, and the `top` accounts by spend, named. Claimed
 * per period (the period's start in the claim's scope), so one instance sends it, once; the report
 * of the period that ended last is sent soon after it ends, or soon after the start if missed.
 */
import { formatUsd } from '../billing/money.js';
import type { AlertsConfig } from '../config/schema.js';
import type { OperationsStore } from '../store/store.js';
import type { AlertChecker } from './alert-checker.js';

const DAY_MS = 86_400_000;

/** The last period that has ended at `now`: `[from, to)`, both at 00:00 UTC. */
export function lastEndedPeriod(every: 'day' | 'week', now: Date): { from: Date; to: Date } {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  if (every === 'day') return { from: new Date(midnight - DAY_MS), to: new Date(midnight) };
  // getUTCDay: 0 is Sunday; weeks start on Monday.
  const monday = midnight - ((now.getUTCDay() + 6) % 7) * DAY_MS;
  return { from: new Date(monday - 7 * DAY_MS), to: new Date(monday) };
}

export function createSpendReportChecker(store: OperationsStore, config: AlertsConfig['spend_report']): AlertChecker {
  /** The period this process last reported or saw claimed: checked without the database. */
  let done = '';
  return {
    name: 'spend report',
    eventTypes: ['spend.report'],
    async check(context) {
      const period = lastEndedPeriod(config.every, context.now);
      const scope = `${config.every}:${period.from.toISOString().slice(0, 10)}`;
      if (scope === done) return;
      const report = await store.spendReport(period, config.top);
      await context.raise({ kind: 'spend.report', subjectId: '', scope }, 'spend.report', {
        period: config.every,
        from: period.from.toISOString(),
        to: period.to.toISOString(),
        total_usd: formatUsd(report.totalNanos),
        requests: report.requests,
        accounts: report.accounts,
        top: report.top.map((row) => ({ account_id: row.accountId, account_name: row.accountName, spent_usd: formatUsd(row.costNanos), requests: row.requests })),
      });
      done = scope;
    },
  };
}
