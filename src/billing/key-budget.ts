/**
 * The periods of key budgets, in UTC (docs/architecture.md, Money): a `day` starts at 00:00, a
 * `week` on Monday at 00:00 (ISO 8601), a `month` on its 1st at 00:00; a `total` never ends (its
 * one period starts at epoch 0). Spend is kept per period start, so a new period needs no reset.
 */
import type { BudgetPeriod, BudgetWindow } from '../store/store.js';

export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['total', 'day', 'week', 'month'];

const DAY_MS = 86_400_000;

/** The period of kind `period` that `at` falls in. */
export function budgetWindow(period: BudgetPeriod, at: Date): BudgetWindow {
  return { period, start: new Date(periodStartMs(period, at)) };
}

/** When the period that `at` falls in ends (the next one starts); null for `total`. */
export function budgetPeriodEnd(period: BudgetPeriod, at: Date): Date | null {
  const start = new Date(periodStartMs(period, at));
  switch (period) {
    case 'total':
      return null;
    case 'day':
      return new Date(start.getTime() + DAY_MS);
    case 'week':
      return new Date(start.getTime() + 7 * DAY_MS);
    case 'month':
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  }
}

function periodStartMs(period: BudgetPeriod, at: Date): number {
  const time = at.getTime();
  if (!Number.isFinite(time)) throw new RangeError('budget period of an invalid date');
  switch (period) {
    case 'total':
      return 0;
    case 'day':
      return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
    case 'week': {
      // getUTCDay: Sunday 0 … Saturday 6; days since Monday: Monday 0 … Sunday 6.
      const sinceMonday = (at.getUTCDay() + 6) % 7;
      return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()) - sinceMonday * DAY_MS;
    }
    case 'month':
      return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
  }
}
