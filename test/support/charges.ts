/**
 * The charges of an account once its holds are settled, after checking what every billing test
 * checks: the balance moved from `startUsd` by exactly those charges, nothing is left reserved,
 * and (unless a test expects one) no excess was recorded.
 */
import { expect } from 'vitest';
import { usdToNanos } from '../../src/billing/money.js';
import type { LedgerEntry } from '../../src/store/store.js';
import type { Harness } from './harness.js';
import { waitFor } from './wait-for.js';

export async function settledCharges(harness: Harness, accountId: string, startUsd: string, options: { excess?: 'allowed' } = {}): Promise<LedgerEntry[]> {
  await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
  const ledger = await harness.store.listLedger(accountId);
  const charged = ledger.filter((entry) => entry.kind === 'charge');
  const account = (await harness.store.findAccount(accountId))!;
  expect(account.balanceNanos).toBe(usdToNanos(startUsd) - charged.reduce((sum, entry) => sum + entry.amountNanos, 0n));
  expect(account.reservedNanos).toBe(0n);
  if (options.excess !== 'allowed') expect(ledger.filter((entry) => entry.kind === 'excess')).toEqual([]);
  return charged;
}
