/**
 * `key_budget.80` and `key_budget.100`: a key's spend (settled charges) in its current budget period
 * has reached 80% or all of its budget. Each fires once per period: the claim's scope is the period's
 * start, so a new day, week or month fires again without re-arming, and a total budget fires once.
 */
import { BUDGET_PERIODS, budgetPeriodEnd, budgetWindow } from '../billing/key-budget.js';
import { formatUsd } from '../billing/money.js';
import type { KeyBudgetLevel, OperationsStore } from '../store/store.js';
import type { AlertChecker, AlertCheckContext } from './alert-checker.js';

/** Keys handled per check; more wait for the next one. */
const BATCH_SIZE = 500;

export function createKeyBudgetChecker(store: OperationsStore): AlertChecker {
  return {
    name: 'key budgets',
    eventTypes: ['key_budget.80', 'key_budget.100'],
    async check(context) {
      const current = BUDGET_PERIODS.map((period) => budgetWindow(period, context.now));
      for (const level of await store.keyBudgetLevels(current, BATCH_SIZE)) {
        if (!level.claimed80) await raise(context, level, 'key_budget.80');
        if (!level.claimed100 && level.spentNanos >= level.key.budget.limitNanos) await raise(context, level, 'key_budget.100');
      }
    },
  };
}

async function raise(context: AlertCheckContext, level: KeyBudgetLevel, type: 'key_budget.80' | 'key_budget.100'): Promise<void> {
  const { key, window } = level;
  const resets = budgetPeriodEnd(window.period, window.start);
  await context.raise({ kind: type, subjectId: key.id, scope: level.periodScope }, type, {
    key_id: key.id,
    key_name: key.name,
    key_prefix: key.prefix,
    account_id: key.accountId,
    period: window.period,
    period_start: window.start.toISOString(),
    resets_at: resets?.toISOString() ?? null,
    limit_usd: formatUsd(key.budget.limitNanos),
    spent_usd: formatUsd(level.spentNanos),
  });
}
