/**
 * Turns database rows into the store's records. The two drivers hand back integers differently
 * (see schema.ts), and a row is data from outside, so every value is checked here rather than
 * trusted: a wrong type throws instead of turning into NaN or a silently rounded amount.
 */
import type { AccountRecord, AdminTokenRecord, ApiKeyRecord, BudgetPeriod, KeyBudget, LedgerEntry } from '../store.js';

/** Raised when a row holds something the schema does not allow: a bug or a foreign database. */
export class StoreDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreDataError';
  }
}

/** A 64-bit value, exactly. pg returns `numeric` results as strings, so digits are accepted too. */
export function toBigInt(value: unknown, field: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new StoreDataError(`${field}: expected an integer, got ${describe(value)}`);
}

/** A count or id that must fit a JS number without rounding. */
export function toSafeNumber(value: unknown, field: string): number {
  const integer = toBigInt(value, field);
  if (integer > BigInt(Number.MAX_SAFE_INTEGER) || integer < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new StoreDataError(`${field}: ${integer} does not fit a safe integer`);
  }
  return Number(integer);
}

export function toNullableSafeNumber(value: unknown, field: string): number | null {
  return value === null ? null : toSafeNumber(value, field);
}

export function toFlag(value: unknown, field: string): boolean {
  const integer = toBigInt(value, field);
  if (integer !== 0n && integer !== 1n) throw new StoreDataError(`${field}: expected 0 or 1, got ${integer}`);
  return integer === 1n;
}

export function toDate(value: unknown, field: string): Date {
  return new Date(toSafeNumber(value, field));
}

export function toNullableDate(value: unknown, field: string): Date | null {
  return value === null ? null : toDate(value, field);
}

export function toText(value: unknown, field: string): string {
  if (typeof value === 'string') return value;
  throw new StoreDataError(`${field}: expected text, got ${describe(value)}`);
}

export function toNullableText(value: unknown, field: string): string | null {
  return value === null ? null : toText(value, field);
}

/** Epoch milliseconds for a column, from a Date that must be valid. */
export function toEpochMilliseconds(date: Date, field: string): number {
  const time = date.getTime();
  if (!Number.isFinite(time)) throw new RangeError(`${field}: invalid date`);
  return time;
}

/** The `models` column: a JSON array of model ids, or null for every model. */
export function decodeModels(value: unknown): string[] | null {
  if (value === null) return null;
  const text = toText(value, 'api_keys.models');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new StoreDataError(`api_keys.models: not JSON: ${text.slice(0, 80)}`);
  }
  if (!Array.isArray(parsed) || !parsed.every((item): item is string => typeof item === 'string')) {
    throw new StoreDataError('api_keys.models: expected an array of strings');
  }
  return parsed;
}

export function encodeModels(models: string[] | null): string | null {
  if (models === null) return null;
  if (!Array.isArray(models) || !models.every((item) => typeof item === 'string')) {
    throw new TypeError('key models must be an array of strings or null');
  }
  return JSON.stringify(models);
}

export interface AccountRow {
  id: unknown;
  name: unknown;
  balance_nanos: unknown;
  reserved_nanos: unknown;
  disabled: unknown;
  created_at: unknown;
  low_balance_threshold_nanos: unknown;
  /** Migration 0015: the part of reserved_nanos that quota slices make up. */
  sliced_nanos: unknown;
}

export function decodeAccount(row: AccountRow): AccountRecord {
  return {
    id: toText(row.id, 'accounts.id'),
    name: toText(row.name, 'accounts.name'),
    balanceNanos: toBigInt(row.balance_nanos, 'accounts.balance_nanos'),
    // What open holds reserve; the account's slices are listed apart (store.ts, AccountRecord).
    reservedNanos: toBigInt(row.reserved_nanos, 'accounts.reserved_nanos') - toBigInt(row.sliced_nanos, 'accounts.sliced_nanos'),
    disabled: toFlag(row.disabled, 'accounts.disabled'),
    createdAt: toDate(row.created_at, 'accounts.created_at'),
    lowBalanceThresholdNanos: row.low_balance_threshold_nanos === null ? null : toBigInt(row.low_balance_threshold_nanos, 'accounts.low_balance_threshold_nanos'),
  };
}

export interface ApiKeyRow {
  id: unknown;
  account_id: unknown;
  name: unknown;
  prefix: unknown;
  hash: unknown;
  models: unknown;
  requests_per_window: unknown;
  tokens_per_minute: unknown;
  expires_at: unknown;
  disabled: unknown;
  created_at: unknown;
  budget_nanos: unknown;
  budget_period: unknown;
  deleted_at: unknown;
}

const BUDGET_PERIODS: readonly BudgetPeriod[] = ['total', 'day', 'week', 'month'];

/** A budget period read from a column: one of the four, or a StoreDataError. */
export function toBudgetPeriod(value: unknown, field: string): BudgetPeriod {
  const text = toText(value, field);
  const period = BUDGET_PERIODS.find((candidate) => candidate === text);
  if (period === undefined) throw new StoreDataError(`${field}: unknown budget period ${JSON.stringify(text)}`);
  return period;
}

function decodeKeyBudget(row: ApiKeyRow): KeyBudget | undefined {
  if (row.budget_nanos === null && row.budget_period === null) return undefined;
  return { limitNanos: toBigInt(row.budget_nanos, 'api_keys.budget_nanos'), period: toBudgetPeriod(row.budget_period, 'api_keys.budget_period') };
}

/** A key record; `budget` and `deletedAt` are left out when the key has none. */
export function decodeApiKey(row: ApiKeyRow): ApiKeyRecord {
  const budget = decodeKeyBudget(row);
  const deletedAt = toNullableDate(row.deleted_at, 'api_keys.deleted_at');
  return {
    id: toText(row.id, 'api_keys.id'),
    accountId: toText(row.account_id, 'api_keys.account_id'),
    name: toNullableText(row.name, 'api_keys.name'),
    prefix: toText(row.prefix, 'api_keys.prefix'),
    hash: toText(row.hash, 'api_keys.hash'),
    models: decodeModels(row.models),
    requestsPerWindow: toNullableSafeNumber(row.requests_per_window, 'api_keys.requests_per_window'),
    tokensPerMinute: toNullableSafeNumber(row.tokens_per_minute, 'api_keys.tokens_per_minute'),
    expiresAt: toNullableDate(row.expires_at, 'api_keys.expires_at'),
    disabled: toFlag(row.disabled, 'api_keys.disabled'),
    createdAt: toDate(row.created_at, 'api_keys.created_at'),
    ...(budget === undefined ? {} : { budget }),
    ...(deletedAt === null ? {} : { deletedAt }),
  };
}

export interface LedgerRow {
  id: unknown;
  account_id: unknown;
  kind: unknown;
  amount_nanos: unknown;
  request_id: unknown;
  key_id: unknown;
  model: unknown;
  input_tokens: unknown;
  cached_input_tokens: unknown;
  cache_write_input_tokens: unknown;
  output_tokens: unknown;
  reasoning_tokens: unknown;
  note: unknown;
  created_at: unknown;
  surface: unknown;
}

export function decodeLedgerEntry(row: LedgerRow): LedgerEntry {
  const kind = toText(row.kind, 'ledger.kind');
  if (kind !== 'credit' && kind !== 'charge' && kind !== 'excess' && kind !== 'debit') throw new StoreDataError(`ledger.kind: unknown kind ${JSON.stringify(kind)}`);
  return {
    id: toSafeNumber(row.id, 'ledger.id'),
    accountId: toText(row.account_id, 'ledger.account_id'),
    kind,
    amountNanos: toBigInt(row.amount_nanos, 'ledger.amount_nanos'),
    requestId: toNullableText(row.request_id, 'ledger.request_id'),
    keyId: toNullableText(row.key_id, 'ledger.key_id'),
    model: toNullableText(row.model, 'ledger.model'),
    inputTokens: toSafeNumber(row.input_tokens, 'ledger.input_tokens'),
    cachedInputTokens: toSafeNumber(row.cached_input_tokens, 'ledger.cached_input_tokens'),
    cacheWriteInputTokens: toSafeNumber(row.cache_write_input_tokens, 'ledger.cache_write_input_tokens'),
    outputTokens: toSafeNumber(row.output_tokens, 'ledger.output_tokens'),
    reasoningTokens: toSafeNumber(row.reasoning_tokens, 'ledger.reasoning_tokens'),
    note: toNullableText(row.note, 'ledger.note'),
    createdAt: toDate(row.created_at, 'ledger.created_at'),
    surface: toNullableText(row.surface, 'ledger.surface'),
  };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `text ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'number') return `number ${value}`;
  return typeof value;
}

export interface AdminTokenRow {
  id: unknown;
  name: unknown;
  role: unknown;
  prefix: unknown;
  hash: unknown;
  disabled: unknown;
  created_at: unknown;
}

export function decodeAdminToken(row: AdminTokenRow): AdminTokenRecord {
  const role = toText(row.role, 'admin_tokens.role');
  if (role !== 'owner' && role !== 'operator' && role !== 'viewer') throw new StoreDataError(`admin_tokens.role: unknown role ${JSON.stringify(role)}`);
  return {
    id: toText(row.id, 'admin_tokens.id'),
    name: toNullableText(row.name, 'admin_tokens.name'),
    role,
    prefix: toText(row.prefix, 'admin_tokens.prefix'),
    hash: toText(row.hash, 'admin_tokens.hash'),
    disabled: toFlag(row.disabled, 'admin_tokens.disabled'),
    createdAt: toDate(row.created_at, 'admin_tokens.created_at'),
  };
}
