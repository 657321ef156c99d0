/**
 * The first-run demo account, so a fresh `npm start` can be called at once: on a database without
 * accounts it creates the account `demo` with a balance and one key, and hands back the secret.
 */
import type { AccountStore } from '../store/store.js';
import { createAccount } from './accounts.js';
import { AdminError } from './admin-error.js';
import type { Actor } from './audit.js';
import { createKey } from './keys.js';

export const DEMO_ACCOUNT_NAME = 'demo';

export interface DemoAccount {
  accountId: string;
  /** The demo key's secret; shown once by whoever called this. */
  secret: string;
}

/**
 * Returns the new demo account and key secret, or null when the database already has accounts.
 * Safe when several processes start at once: the unique account name lets exactly one insert win,
 * and the others see the conflict and return null.
 */
export async function ensureDemoAccount(store: AccountStore, options: { balanceUsd: string }, actor: Actor): Promise<DemoAccount | null> {
  if ((await store.listAccounts()).length > 0) return null;
  let accountId: string;
  try {
    accountId = (await createAccount(store, { name: DEMO_ACCOUNT_NAME, balanceUsd: options.balanceUsd }, actor)).id;
  } catch (error) {
    if (error instanceof AdminError && error.kind === 'conflict') return null;
    throw error;
  }
  const { secret } = await createKey(store, { accountRef: accountId, name: DEMO_ACCOUNT_NAME }, actor);
  return { accountId, secret };
}
