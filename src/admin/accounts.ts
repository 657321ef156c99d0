/**
 * Account administration: create, list, rename, disable/enable, credit and debit. Shared by the CLI
 * and the admin HTTP routes; every change is recorded in the audit log with its before and after.
 */
import { newId } from '../auth/key-secret.js';
import { formatUsd, MAX_USD_NANOS } from '../billing/money.js';
import type { AccountActivityRecord, AccountFilter, AccountListCursor, AccountRecord, AccountSort, LedgerEntry, Page, AccountStore, MoneyStore, TimeRange } from '../store/store.js';
import { AdminError } from './admin-error.js';
import { auditDraft, type Actor } from './audit.js';
import { parseUsdAmount, requireOrderedRange, requireValidDate } from './input.js';
import { isUniqueViolation } from './unique-violation.js';
import { accountView } from './views.js';

const ACCOUNT_ID_PREFIX = 'acct';
const MAX_NAME_LENGTH = 100;

export interface NewAccountInput {
  name: string;
  /** Opening balance in USD, decimal (`"5"`, `"0.25"`); zero when absent. */
  balanceUsd?: string;
}

/** Creates an account. Refuses a bad or taken name and a bad balance with an `AdminError`. */
export async function createAccount(store: AccountStore, input: NewAccountInput, actor: Actor): Promise<AccountRecord> {
  const name = validateAccountName(input.name);
  const openingBalanceNanos = parseUsdAmount(input.balanceUsd ?? '0', 'balance', { positive: false });
  if ((await store.findAccount(name)) !== undefined) throw nameTaken(name);
  try {
    return await store.createAccount({ id: newId(ACCOUNT_ID_PREFIX), name, openingBalanceNanos }, auditDraft(actor, 'account.create', accountView));
  } catch (error) {
    // Another process created the same name between our check and our insert.
    if (isUniqueViolation(error)) throw nameTaken(name);
    throw error;
  }
}

/** How far back an account list's spend reaches when the query names no `from`. */
const DEFAULT_SPEND_DAYS = 30;

/**
 * A page of accounts with their spend over `range` (the 30 days before `to`, or before now, when it
 * has no `from`) and their last request, sorted on the server.
 */
export async function listAccountActivity(
  store: AccountStore,
  filter: AccountFilter,
  sort: { by: AccountSort; descending: boolean },
  range: TimeRange,
  page: { limit: number; after?: AccountListCursor },
  now: Date = new Date(),
): Promise<Page<AccountActivityRecord, AccountListCursor>> {
  const to = range.to === undefined ? undefined : requireValidDate(range.to, 'to');
  const from = range.from === undefined ? new Date((to ?? now).getTime() - DEFAULT_SPEND_DAYS * 86_400_000) : requireValidDate(range.from, 'from');
  requireOrderedRange(from, to);
  return store.listAccountActivity(filter, sort, { from, ...(to === undefined ? {} : { to }) }, page);
}

export async function renameAccount(store: AccountStore, accountRef: string, newName: string, actor: Actor): Promise<AccountRecord> {
  const before = await requireAccount(store, accountRef);
  const name = validateAccountName(newName);
  const holder = await store.findAccount(name);
  if (holder !== undefined && holder.id !== before.id) throw nameTaken(name);
  try {
    await store.renameAccount(before.id, name, auditDraft(actor, 'account.rename', accountView));
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(name);
    throw error;
  }
  return requireAccount(store, before.id);
}

export interface AccountChanges {
  name?: string;
  /** USD, or null to remove the threshold. */
  lowBalanceThresholdUsd?: string | null;
}

/**
 * Applies the changes given, each audited on its own: the rename first, so that a taken name
 * changes nothing; every input is checked before either is made.
 */
export async function updateAccount(store: AccountStore, accountRef: string, changes: AccountChanges, actor: Actor): Promise<AccountRecord> {
  if (changes.name === undefined && changes.lowBalanceThresholdUsd === undefined) {
    throw new AdminError('invalid_input', 'give at least one change: name or low_balance_threshold_usd');
  }
  if (changes.name !== undefined) validateAccountName(changes.name);
  if (typeof changes.lowBalanceThresholdUsd === 'string') parseLowBalanceThreshold(changes.lowBalanceThresholdUsd);
  let account = await requireAccount(store, accountRef);
  if (changes.name !== undefined) account = await renameAccount(store, account.id, changes.name, actor);
  if (changes.lowBalanceThresholdUsd !== undefined) account = await setLowBalanceThreshold(store, account.id, changes.lowBalanceThresholdUsd, actor);
  return account;
}

/** A disabled account's keys are refused (401) by every instance within a second. */
export async function setAccountDisabled(store: AccountStore, accountRef: string, disabled: boolean, actor: Actor): Promise<AccountRecord> {
  const before = await requireAccount(store, accountRef);
  await store.setAccountDisabled(before.id, disabled, auditDraft(actor, disabled ? 'account.disable' : 'account.enable', accountView));
  return requireAccount(store, before.id);
}

/**
 * Takes a positive USD amount off an account's balance through the ledger; refused (conflict) when
 * the balance less its open holds and its quota slices does not cover it, so a balance never goes
 * below zero.
 */
export async function debitAccount(store: AccountStore & MoneyStore, accountRef: string, amountUsd: string, note: string | null, actor: Actor): Promise<AccountRecord> {
  const amountNanos = parseUsdAmount(amountUsd, 'amount', { positive: true });
  const before = await requireAccount(store, accountRef);
  const after = await store.debit(before.id, amountNanos, note, auditDraft(actor, 'account.debit', accountView, { note }));
  if (after === undefined) {
    const current = (await store.findAccount(before.id)) ?? before;
    // What the gateway's quota slices hold is reserved like a hold; it comes back when they go idle.
    const sliced = (await store.listSlices(before.id)).reduce((sum, slice) => sum + slice.amountNanos, 0n);
    const inSlices = sliced > 0n ? `; ${formatUsd(sliced)} USD more is held by running gateways' quota slices until they go idle` : '';
    throw new AdminError(
      'conflict',
      `a debit of ${formatUsd(amountNanos)} USD would take the balance below zero (available: ${formatUsd(current.balanceNanos - current.reservedNanos - sliced)} USD${inSlices})`,
    );
  }
  return after;
}

/**
 * Sets the balance (less open holds) below which the account's `balance.low` alert fires, or
 * removes it (`null`); a new threshold re-arms the alert, so it fires again if the account is
 * below the new one.
 */
export async function setLowBalanceThreshold(store: AccountStore, accountRef: string, thresholdUsd: string | null, actor: Actor): Promise<AccountRecord> {
  const thresholdNanos = thresholdUsd === null ? null : parseLowBalanceThreshold(thresholdUsd);
  const before = await requireAccount(store, accountRef);
  await store.setLowBalanceThreshold(before.id, thresholdNanos, auditDraft(actor, 'account.set_low_balance_threshold', accountView));
  return requireAccount(store, before.id);
}

/** One page of an account's ledger, newest first, in a time range (`from` at or before `to`). */
export async function listLedgerPage(store: AccountStore & MoneyStore, accountRef: string, range: TimeRange, page: { limit: number; after?: number }): Promise<Page<LedgerEntry, number>> {
  requireOrderedRange(range.from, range.to);
  const account = await requireAccount(store, accountRef);
  return store.listLedgerPage(account.id, range, page);
}


export async function listAccounts(store: AccountStore): Promise<AccountRecord[]> {
  return store.listAccounts();
}

/** Adds a positive USD amount to an account's balance through the ledger, up to MAX_USD_NANOS (conflict beyond). */
export async function creditAccount(
  store: AccountStore & MoneyStore,
  accountRef: string,
  amountUsd: string,
  note: string | null,
  actor: Actor,
): Promise<AccountRecord> {
  const amountNanos = parseUsdAmount(amountUsd, 'amount', { positive: true });
  const account = await requireAccount(store, accountRef);
  // Checked before the write: credits racing past it still fit the columns (billing/money.ts).
  if (account.balanceNanos + amountNanos > MAX_USD_NANOS) {
    throw new AdminError(
      'conflict',
      `a credit of ${formatUsd(amountNanos)} USD would take the balance above the maximum of ${formatUsd(MAX_USD_NANOS)} USD (balance: ${formatUsd(account.balanceNanos)} USD)`,
    );
  }
  return store.credit(account.id, amountNanos, note, auditDraft(actor, 'account.credit', accountView, { note }));
}

/** The account with this id or name, or an `AdminError` saying there is none. */
export async function requireAccount(store: AccountStore, accountRef: string): Promise<AccountRecord> {
  const reference = accountRef.trim();
  const account = reference === '' ? undefined : await store.findAccount(reference);
  if (account === undefined) {
    throw new AdminError('not_found', `no account with id or name ${JSON.stringify(accountRef)}`);
  }
  return account;
}

/**
 * Names are how operators refer to accounts, so they must be printable and must not look like an id:
 * lookups try the id first, and a name such as `acct_…` could shadow or be shadowed by one.
 */
function validateAccountName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw new AdminError('invalid_input', 'account name must not be empty');
  if (name.length > MAX_NAME_LENGTH) {
    throw new AdminError('invalid_input', `account name must be at most ${MAX_NAME_LENGTH} characters`);
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) {
    throw new AdminError('invalid_input', 'account name must not contain control characters');
  }
  if (name.startsWith(`${ACCOUNT_ID_PREFIX}_`)) {
    throw new AdminError('invalid_input', `account name must not start with "${ACCOUNT_ID_PREFIX}_" (that is how ids start)`);
  }
  return name;
}

function parseLowBalanceThreshold(value: string): bigint {
  return parseUsdAmount(value, 'low_balance_threshold_usd', { positive: true });
}

function nameTaken(name: string): AdminError {
  return new AdminError('conflict', `an account named ${JSON.stringify(name)} already exists`);
}
