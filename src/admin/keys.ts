/**
 * API key administration: create (the only moment the secret exists outside its owner), list,
 * disable and enable. Shared by the CLI and the admin HTTP routes.
 */
import { displayPrefix, generateKeySecret, hashKeySecret, newId } from '../auth/key-secret.js';
import type { ApiKeyRecord, Store } from '../store/store.js';
import { requireAccount } from './accounts.js';
import { AdminError } from './admin-error.js';
import { requirePositiveInteger, requireValidDate } from './input.js';

const KEY_ID_PREFIX = 'key';
const MAX_NAME_LENGTH = 100;

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
}

export interface CreatedKey {
  key: ApiKeyRecord;
  /** The whole secret. It is not stored anywhere: show it once, then drop it. */
  secret: string;
}

export async function createKey(store: Store, input: NewKeyInput): Promise<CreatedKey> {
  const name = validateKeyName(input.name ?? null);
  const models = validateModels(input.models ?? null);
  const requestsPerWindow = optional(input.requestsPerWindow, (value) => requirePositiveInteger(value, 'requests per window'));
  const tokensPerMinute = optional(input.tokensPerMinute, (value) => requirePositiveInteger(value, 'tokens per minute'));
  const expiresAt = optional(input.expiresAt, validateExpiry);
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
  };
  await store.createKey(key);
  return { key, secret };
}

/** Every key, or the keys of one account (by id or name). */
export async function listKeys(store: Store, accountRef?: string): Promise<ApiKeyRecord[]> {
  if (accountRef === undefined) return store.listKeys();
  const account = await requireAccount(store, accountRef);
  return store.listKeys(account.id);
}

/** Disables or enables a key found by id or display prefix; returns it as it now is. */
export async function setKeyDisabled(store: Store, keyRef: string, disabled: boolean): Promise<ApiKeyRecord> {
  const reference = keyRef.trim();
  const key = reference === '' ? undefined : await store.findKey(reference);
  const notFound = (): AdminError => new AdminError('not_found', `no key with id or prefix ${JSON.stringify(keyRef)}`);
  if (key === undefined) throw notFound();
  // The key can vanish between the lookup and the update only if something deletes keys.
  if (!(await store.setKeyDisabled(key.id, disabled))) throw notFound();
  return { ...key, disabled };
}

/** Whether a key can be used at `now`, for listings. */
export function keyStatus(key: ApiKeyRecord, now: Date = new Date()): 'active' | 'disabled' | 'expired' {
  if (key.disabled) return 'disabled';
  if (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
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
