/**
 * `balance.low`: an account's balance less its open holds has dropped below the threshold an
 * operator set for it. Fires once per crossing; re-armed when the account is back at or above
 * its threshold (a top-up), or when the threshold changes.
 */
import { formatUsd } from '../billing/money.js';
import type { OperationsStore } from '../store/store.js';
import type { AlertChecker } from './alert-checker.js';

/** Crossings handled per check; more wait for the next one. */
const BATCH_SIZE = 500;

export function createLowBalanceChecker(store: OperationsStore): AlertChecker {
  return {
    name: 'low balance',
    eventTypes: ['balance.low'],
    async check(context) {
      for (const crossing of await store.lowBalanceCrossings(BATCH_SIZE)) {
        const claim = { kind: 'balance.low', subjectId: crossing.accountId, scope: '' };
        if (crossing.direction === 'recovered') {
          await context.rearm(claim);
          continue;
        }
        await context.raise(claim, 'balance.low', {
          account_id: crossing.accountId,
          account_name: crossing.accountName,
          balance_usd: formatUsd(crossing.balanceNanos),
          reserved_usd: formatUsd(crossing.reservedNanos),
          available_usd: formatUsd(crossing.balanceNanos - crossing.reservedNanos),
          threshold_usd: formatUsd(crossing.thresholdNanos),
        });
      }
    },
  };
}
