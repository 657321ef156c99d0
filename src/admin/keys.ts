/**
 * API key administration: create (the only moment a secret exists outside its owner), list, get
 * (with what its budget has left), change limits and budget, disable and enable, rotate (a new
 * secret, shown once; the old one refused from then on) and delete (refused from then on, its
 * ledger history kept). Shared by the CLI and the admin HTTP routes, so the two cannot disagree;
 * every change is recorded in the audit log with its before and after, never a secret or a hash.
 */
import { displayPrefix, generateKeySecret, hashKeySecret, newId } from '../auth/key-secret.js';
import { BUDGET_PERIODS, budgetPeriodEnd, budgetWindow } from '../billing/key-budget.js';
import type { ApiKeyRecord, BudgetPeriod, KeyBudget, KeyChanges, KeyCursor, KeyStatus, Page, AccountStore, MoneyStore } from '../store/store.js';
import { requireAccount } from './accounts.js';
import { AdminError } from './admin-error.js';
import { auditDraft, type Actor } from './audit.js';
import { parseUsdAmount, requirePositiveInteger, requireValidDate } from './input.js';
import type { KeyBudgetUsage, KeyDetails } from './results.js';
import { keyView } from './views.js';

const KEY_ID_PREFIX = 'key';
const MAX_NAME_LENGTH = 100;

/** A budget as operators write it: a USD amount and a period. */
export interface KeyBudgetInput {
  limitUsd: string;
  /** total, day, week or month; when absent, the key's current period, else total. */
  period?: string;
}

export interface NewKeyInput {
  /** Account id or name. */
  accountRef: string;
  name?: string | null;
  /** Model ids the key may use; absent or null allows every model. */
  models?: string[] | null;
  /** Override of the configured requests per window; absent or null keeps the default. */
  requestsPerWindow?: number | null;
  /** Override of the configured tokens per minute; absent or null keeps the default. */
  tokensPerMinute?: number | null;
  /** Must lie in the future; absent or null never expires. */
  expiresAt?: Date | null;
  /** A spend limit; absent or null: none (the account's balance is the only limit). */
  budget?: KeyBudgetInput | null;
}

/** A change of a key's settings: an absent field stays as it is, null clears it. */
export type KeyUpdateInput = Omit<NewKeyInput, 'accountRef'>;

export interface CreatedKey {
  key: ApiKeyRecord;
  /** The whole secret. It is not stored anywhere: show it once, then drop it. */
  secret: string;
}

export async function createKey(store: AccountStore, input: NewKeyInput, actor: Actor): Promise<CreatedKey> {
  const name = validateKeyName(input.name ?? null);
  const models = validateModels(input.models ?? null);
  const requestsPerWindow = optional(input.requestsPerWindow, (value) => requirePositiveInteger(value, 'requests per window'));
  const tokensPerMinute = optional(input.tokensPerMinute, (value) => requirePositiveInteger(value, 'tokens per minute'));
  const expiresAt = optional(input.expiresAt, validateExpiry);
  const budget = input.budget === undefined || input.budget === null ? undefined : parseBudget(input.budget, undefined);
  const account = await requireAccount(store, input.accountRef);

  const secret = generateKeySecret();
  const key: ApiKeyRecord = {
    id: newId(KEY_ID_PREFIX),
    accountId: account.id,
    name,
    prefix: displayPrefix(secret),
    hash: hashKeySecret(secret),
    models,
    requestsPerWindow,
    tokensPerMinute,
    expiresAt,
    disabled: false,
    createdAt: new Date(),
    ...(budget === undefined ? {} : { budget }),
  };
  await store.createKey(key, auditDraft(actor, 'key.create', auditView));
  return { key, secret };
}

/** Every key that is not deleted (or with `status`, the keys in it), of every account or of one (by id or name). */
export async function listKeys(store: AccountStore, filter: { accountRef?: string; status?: KeyStatus } = {}, now: Date = new Date()): Promise<ApiKeyRecord[]> {
  const keys: ApiKeyRecord[] = [];
  let after: KeyCursor | undefined;
  do {
    const page = await listKeysPage(store, filter, { limit: 500, ...(after === undefined ? {} : { after }) }, now);
    keys.push(...page.rows);
    after = page.next;
  } while (after !== undefined);
  return keys;
}

export async function listKeysPage(
  store: AccountStore,
  filter: { accountRef?: string; status?: KeyStatus },
  page: { limit: number; after?: KeyCursor },
  now: Date = new Date(),
): Promise<Page<ApiKeyRecord, KeyCursor>> {
  const accountId = filter.accountRef === undefined ? undefined : (await requireAccount(store, filter.accountRef)).id;
  return store.listKeysPage({ now, ...(accountId === undefined ? {} : { accountId }), ...(filter.status === undefined ? {} : { status: filter.status }) }, page);
}

/** The key with this id or prefix (deleted ones too), with what its budget has left at `now`. */
export async function getKey(store: AccountStore & MoneyStore, keyRef: string, now: Date = new Date()): Promise<KeyDetails> {
  const key = await requireKey(store, keyRef);
  if (key.budget === undefined) return { key };
  return { key, budgetUsage: await budgetUsage(store, key.id, key.budget, now) };
}

/** Changes a key's name, models, limits, expiry or budget; refuses an empty change. */
export async function updateKey(store: AccountStore, keyRef: string, input: KeyUpdateInput, actor: Actor, now: Date = new Date()): Promise<ApiKeyRecord> {
  const changes: KeyChanges = {};
  if (input.name !== undefined) changes.name = validateKeyName(input.name);
  if (input.models !== undefined) changes.models = validateModels(input.models);
  if (input.requestsPerWindow !== undefined) changes.requestsPerWindow = optional(input.requestsPerWindow, (value) => requirePositiveInteger(value, 'requests per window'));
  if (input.tokensPerMinute !== undefined) changes.tokensPerMinute = optional(input.tokensPerMinute, (value) => requirePositiveInteger(value, 'tokens per minute'));
  if (input.expiresAt !== undefined) changes.expiresAt = optional(input.expiresAt, validateExpiry);
  if (Object.keys(changes).length === 0 && input.budget === undefined) {
    throw new AdminError('invalid_input', 'nothing to change: give a name, models, limits, an expiry or a budget');
  }
  const before = await requireLiveKey(store, keyRef);
  if (input.budget !== undefined) {
    const budget = input.budget === null ? null : parseBudget(input.budget, before.budget?.period);
    changes.budget = budget === null ? null : { ...budget, current: budgetWindow(budget.period, now) };
  }
  if (!(await store.updateKey(before.id, changes, auditDraft(actor, 'key.update', auditView)))) throw await deletedMeanwhile(store, keyRef);
  return requireKey(store, before.id);
}

/** A disabled key is refused (401) by every instance within a second. */
export async function setKeyDisabled(store: AccountStore, keyRef: string, disabled: boolean, actor: Actor): Promise<ApiKeyRecord> {
  const before = await requireLiveKey(store, keyRef);
  if (!(await store.setKeyDisabled(before.id, disabled, auditDraft(actor, disabled ? 'key.disable' : 'key.enable', auditView)))) {
    throw await deletedMeanwhile(store, keyRef);
  }
  return requireKey(store, before.id);
}

/** A new secret for the key, returned once; the old one is refused from then on, everywhere. */
export async function rotateKey(store: AccountStore, keyRef: string, actor: Actor): Promise<CreatedKey> {
  const before = await requireLiveKey(store, keyRef);
  const secret = generateKeySecret();
  if (!(await store.rotateKey(before.id, { prefix: displayPrefix(secret), hash: hashKeySecret(secret) }, auditDraft(actor, 'key.rotate', auditView)))) {
    throw await deletedMeanwhile(store, keyRef);
  }
  return { key: await requireKey(store, before.id), secret };
}

/** Deletes a key: refused from then on, kept with its ledger history (and shown with status `deleted`). */
export async function deleteKey(store: AccountStore, keyRef: string, actor: Actor): Promise<ApiKeyRecord> {
  const before = await requireLiveKey(store, keyRef);
  if (!(await store.deleteKey(before.id, auditDraft(actor, 'key.delete', auditView)))) throw await deletedMeanwhile(store, keyRef);
  return requireKey(store, before.id);
}

/** The key with this id or display prefix, deleted or not. */
export async function requireKey(store: AccountStore, keyRef: string): Promise<ApiKeyRecord> {
  const reference = keyRef.trim();
  const key = reference === '' ? undefined : await store.findKey(reference);
  if (key === undefined) throw new AdminError('not_found', `no key with id or prefix ${JSON.stringify(keyRef)}`);
  return key;
}

async function requireLiveKey(store: AccountStore, keyRef: string): Promise<ApiKeyRecord> {
  const key = await requireKey(store, keyRef);
  if (key.deletedAt !== undefined) throw deletedKey(key);
  return key;
}

/** The store refused a change to a key found a moment ago: it has been deleted since. */
async function deletedMeanwhile(store: AccountStore, keyRef: string): Promise<AdminError> {
  return deletedKey(await requireKey(store, keyRef));
}

function deletedKey(key: ApiKeyRecord): AdminError {
  return new AdminError('conflict', `key ${key.id} was deleted${key.deletedAt === undefined ? '' : ` at ${key.deletedAt.toISOString()}`}; it cannot be changed`);
}

async function budgetUsage(store: AccountStore & MoneyStore, keyId: string, budget: KeyBudget, now: Date): Promise<KeyBudgetUsage> {
  const window = budgetWindow(budget.period, now);
  const { spentNanos, reservedNanos } = await store.keySpend(keyId, window);
  const left = budget.limitNanos - spentNanos - reservedNanos;
  return { window, endsAt: budgetPeriodEnd(budget.period, now), spentNanos, reservedNanos, remainingNanos: left > 0n ? left : 0n };
}

/** The key as the audit log shows it: its view at the moment, never its hash or secret. */
function auditView(key: ApiKeyRecord): object {
  return keyView(key);
}

function parseBudget(input: KeyBudgetInput, currentPeriod: BudgetPeriod | undefined): KeyBudget {
  const limitNanos = parseUsdAmount(input.limitUsd, 'budget', { positive: true });
  if (input.period === undefined) return { limitNanos, period: currentPeriod ?? 'total' };
  const period = BUDGET_PERIODS.find((candidate) => candidate === input.period?.trim());
  if (period === undefined) throw new AdminError('invalid_input', `budget period must be one of ${BUDGET_PERIODS.join(', ')} (got ${JSON.stringify(input.period)})`);
  return { limitNanos, period };
}

function optional<T>(value: T | null | undefined, validate: (value: T) => T): T | null {
  return value === undefined || value === null ? null : validate(value);
}

function validateKeyName(raw: string | null): string | null {
  const name = raw?.trim() ?? '';
  if (name === '') return null;
  if (name.length > MAX_NAME_LENGTH) throw new AdminError('invalid_input', `key name must be at most ${MAX_NAME_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new AdminError('invalid_input', 'key name must not contain control characters');
  return name;
}

/** An empty list would make a key that can call nothing, which is never what was meant. */
function validateModels(models: string[] | null): string[] | null {
  if (models === null) return null;
  const cleaned = [...new Set(models.map((model) => model.trim()))];
  if (cleaned.length === 0 || cleaned.includes('')) {
    throw new AdminError('invalid_input', 'models must list one or more non-empty model ids');
  }
  return cleaned;
}

function validateExpiry(expiresAt: Date): Date {
  requireValidDate(expiresAt, 'expiry');
  if (expiresAt.getTime() <= Date.now()) {
    throw new AdminError('invalid_input', `expiry must be in the future (got ${expiresAt.toISOString()})`);
  }
  return expiresAt;
}
