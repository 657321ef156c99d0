/**
 * The store: the only place with SQL. Its ports are narrow interfaces named for what they hold:
 * MoneyStore (holds, settlements, the ledger, key spend), AccountStore (accounts, keys, admin
 * tokens, console sessions, audit), OperationsStore (the connection and schema, stored
 * responses, instances, the request log, usage, alerts) and CatalogStore (the runtime catalog's
 * versions); `Store` is all of them, for the
 * composition root only. SQLite (better-sqlite3) and PostgreSQL (pg) are behind them through the
 * same Kysely queries and migrations. Money is integer nano-USD as `bigint`.
 * The ledger is append-only: the balance always equals the sum of credits minus the sum of charges.
 */

import type { SliceHold, SliceStore } from './slice-records.js';

export interface AccountRecord {
  id: string;
  name: string;
  /** Credits minus charges, nano-USD. */
  balanceNanos: bigint;
  /** Sum of the open holds, nano-USD; spendable = balance − reserved − its quota slices (`listSlices`). */
  reservedNanos: bigint;
  disabled: boolean;
  createdAt: Date;
  /** A `balance.low` alert fires when balance − reserved drops below this (nano-USD); null: none. */
  lowBalanceThresholdNanos: bigint | null;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string | null;
  /** The first characters of the secret (`sk-tg-abcd`), safe to show. */
  prefix: string;
  /** SHA-256 of the whole secret, lowercase hex. The secret itself is never stored. */
  hash: string;
  /** Model ids this key may use; null means every model. */
  models: string[] | null;
  /** Per-key overrides of the configured limits; null means the default. */
  requestsPerWindow: number | null;
  tokensPerMinute: number | null;
  expiresAt: Date | null;
  disabled: boolean;
  createdAt: Date;
  /** A spend limit (migration 0006); absent means none. */
  budget?: KeyBudget;
  /** When the key was deleted (refused from then on, its history kept); absent means never. */
  deletedAt?: Date;
}

/**
 * How a key budget's spend is grouped: `total` never resets; `day`, `week` (from Monday) and
 * `month` are calendar periods in UTC that start afresh by themselves (docs/architecture.md, Money).
 */
export type BudgetPeriod = 'total' | 'day' | 'week' | 'month';

/** A key's spend limit: at most `limitNanos` per `period`. */
export interface KeyBudget {
  limitNanos: bigint;
  period: BudgetPeriod;
}

/** The period of a key budget a hold counts against: `start` is its first instant (epoch 0 for `total`). */
export interface BudgetWindow {
  period: BudgetPeriod;
  start: Date;
}

export interface KeyWithAccount {
  key: ApiKeyRecord;
  account: AccountRecord;
}

export interface TokenCounts {
  inputTokens: number;
  cachedInputTokens: number;
  /** Input tokens written to the upstream's prompt cache (part of `inputTokens`); absent means 0. */
  cacheWriteInputTokens?: number;
  outputTokens: number;
  reasoningTokens: number;
}

export interface Charge extends TokenCounts {
  requestId: string;
  keyId: string;
  model: string;
  /** What is debited: never more than the hold. */
  costNanos: bigint;
  /** Cost reported beyond the hold: recorded as an `excess` entry, never debited. */
  excessNanos: bigint;
}

/** Usage metered so far by a running request, and how long its hold stays open without news. */
export interface HoldCheckpoint {
  holdId: string;
  expiresAt: Date;
  /** What the hold settles if its process dies now: at most the hold. */
  costNanos: bigint;
  tokens: TokenCounts;
  /** Admitted from a quota slice: unless it has a row, this checkpoint moves it from the slice into one. */
  slice?: SliceHold;
}

export interface LedgerEntry extends TokenCounts {
  id: number;
  accountId: string;
  kind: 'credit' | 'charge' | 'excess' | 'debit';
  /**
   * Always ≥ 0; a charge or a debit (an operator's adjustment) subtracts it from the balance, a
   * credit adds it; an excess (cost an
   * upstream reported beyond the request's hold) is recorded for the operator and moves nothing.
   */
  amountNanos: bigint;
  requestId: string | null;
  keyId: string | null;
  model: string | null;
  note: string | null;
  createdAt: Date;
  /**
   * The `/v1` endpoint (client surface) a charge or excess paid for, from its hold; null for
   * credits and debits, and for charges written before migration 0012.
   */
  surface: string | null;
}

export interface UsageRow extends TokenCounts {
  model: string;
  requests: number;
  costNanos: bigint;
  /** Cost upstreams reported beyond the holds, not billed. */
  excessNanos: bigint;
}

export interface NewHold {
  id: string;
  accountId: string;
  keyId: string;
  requestId: string;
  /** Catalog model id: recorded on the charge an expired hold settles. */
  model: string;
  amountNanos: bigint;
  expiresAt: Date;
  /**
   * The `/v1` endpoint (client surface) the hold is for: every settlement of the hold (by its
   * request, the settle retrier or the expiry sweep) writes it on the charge. Absent: null, unknown.
   */
  surface?: string;
  /**
   * The key's budget period, when the key has a budget: the hold is then opened only if the key's
   * spend in that period, plus its open holds there, plus this one stay within the budget (in the
   * same transaction as the balance check), and its settlement counts there. Absent: no key budget.
   */
  keyBudget?: BudgetWindow;
}

/**
 * What `openHold` rejects with when the key's budget, not the balance, cannot cover the hold
 * (nothing is reserved then). The balance refusal stays a `false` result.
 */
export class KeyBudgetExceededError extends Error {
  constructor(readonly keyId: string) {
    super(`the budget of key ${keyId} cannot cover the hold`);
    this.name = 'KeyBudgetExceededError';
  }
}

/** A response kept for `GET /v1/responses/{id}` and `previous_response_id` (Responses `store`). */
export interface StoredResponse {
  id: string;
  accountId: string;
  /** The final response object, as sent to the client. */
  response: Record<string, unknown>;
  /**
   * The whole conversation input this response answered, already expanded (earlier turns of a
   * `previous_response_id` chain included), as Responses input items with ids.
   */
  inputItems: Array<Record<string, unknown>>;
  createdAt: Date;
}

/** A running gateway instance, seen through its heartbeat. */
export interface InstanceRecord {
  id: string;
  /** Whether it runs with a shared limit store (Redis) or only per-instance limits. */
  sharedLimits: boolean;
  lastSeenAt: Date;
}

export type AdminRole = 'owner' | 'operator' | 'viewer';

export interface AdminTokenRecord {
  id: string;
  name: string | null;
  role: AdminRole;
  /** The first characters of the secret (`tg-admin-ab`), safe to show. */
  prefix: string;
  /** SHA-256 of the whole secret, lowercase hex. */
  hash: string;
  disabled: boolean;
  createdAt: Date;
}

/** Who a web console session stands for: an admin token, or an API key (its holder). */
export type ConsoleSessionKind = 'admin' | 'key';

export interface ConsoleSessionRecord {
  /** SHA-256 of the session id (lowercase hex); the id itself lives only in the browser's cookie. */
  hash: string;
  kind: ConsoleSessionKind;
  /** The admin token's id, or the API key's id. */
  subjectId: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface NewAuditEntry {
  /** Null when the change came through the CLI. */
  adminTokenId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  before: unknown;
  after: unknown;
}

/**
 * An audit row for a store change, written in the change's own transaction: the store reads the
 * record before and after the change (inside that transaction) and shows both through `view`.
 */
export interface AuditDraft<T> {
  adminTokenId: string | null;
  action: string;
  view: (record: T) => object;
  /** Added to the after image (the reason of a credit, say). */
  details?: Record<string, unknown>;
}

export interface AuditEntry extends NewAuditEntry {
  id: number;
  at: Date;
}

/** Keyset pagination: at most `limit` rows after the cursor (exclusive), in the listing's order. */
export interface PageRequest<Cursor> {
  limit: number;
  after?: Cursor;
}

export interface Page<Row, Cursor> {
  rows: Row[];
  /** Where the next page starts; absent on the last page. */
  next?: Cursor;
}

/** Accounts sort by creation time, then id. */
export interface AccountCursor {
  createdAt: Date;
  id: string;
}

export interface AccountFilter {
  /** Names containing this text (case-sensitive). */
  nameContains?: string;
  status?: 'active' | 'disabled';
}

/** What the account list sorts by (then by id, in the same direction). */
export type AccountSort = 'created' | 'name' | 'spend' | 'last_used';

/**
 * A sorted account list's cursor: the sort and direction it was read in, and the last row's sort
 * value (epoch milliseconds, a name, or nano-USD as a decimal string) and id.
 */
export interface AccountListCursor {
  sort: AccountSort;
  descending: boolean;
  value: string | number;
  id: string;
}

/** An account as the sorted list shows it: with its spend over the list's range and its last request. */
export interface AccountActivityRecord extends AccountRecord {
  /** Charges in the range, nano-USD. */
  spendNanos: bigint;
  /** Its latest request-log row's arrival; null when the log holds none. */
  lastUsedAt: Date | null;
}

/** Keys sort by creation time, then id, like accounts. */
export type KeyCursor = AccountCursor;

/** What a key is now: deleted wins over disabled, disabled over expired. */
export type KeyStatus = 'active' | 'disabled' | 'expired' | 'deleted';

export interface KeyFilter {
  accountId?: string;
  /** Absent: every key but the deleted ones. */
  status?: KeyStatus;
  /** The instant `expired` and `active` are judged at. */
  now: Date;
}

/** A change to a key's settings: an absent field stays as it is, null clears it. */
export interface KeyChanges {
  name?: string | null;
  models?: string[] | null;
  requestsPerWindow?: number | null;
  tokensPerMinute?: number | null;
  expiresAt?: Date | null;
  /**
   * A new budget, or null for none. When the key's budget period `current` has no spend row yet
   * (the key had no budget of that period), its spend so far is counted from the ledger's charges.
   */
  budget?: (KeyBudget & { current: BudgetWindow }) | null;
}

/** A key's spend in one budget period: settled charges, and what its open holds there reserve. */
export interface KeySpend {
  spentNanos: bigint;
  reservedNanos: bigint;
}

/**
 * A key whose spend in its current budget period has reached 80% of its budget, with the alert
 * claims it has for that period (kinds `key_budget.80` and `key_budget.100`, scope `periodScope`).
 */
export interface KeyBudgetLevel {
  key: ApiKeyRecord & { budget: KeyBudget };
  window: BudgetWindow;
  /** The claims' scope for this period: its start in epoch milliseconds, as text. */
  periodScope: string;
  spentNanos: bigint;
  claimed80: boolean;
  claimed100: boolean;
}

// ---- Request log and usage by group (migration 0007) ----

/** One routed `/v1` request, as the request log keeps it (docs/architecture.md, Request log). */
export interface RequestLogEntry extends TokenCounts {
  /** When the request arrived. */
  at: Date;
  requestId: string;
  /** Null when the request was refused before its key was known (a 401, say). */
  accountId: string | null;
  keyId: string | null;
  /** The client surface, the endpoint (`responses`, `chat-completions`, `embeddings`…: protocol/canonical.ts's `SURFACES`); null for other `/v1` routes. */
  surface: string | null;
  /** Catalog model id; null when refused before a catalog model was named. */
  model: string | null;
  /**
   * The upstream target that answered (its label); when none did, the last one tried that failed;
   * null when none was tried.
   */
  target: string | null;
  /** HTTP status of the answer (200 also for a stream that failed midway: see errorCode). */
  status: number;
  /**
   * What named the error to the client, also mid-stream: the error body's `code`, or its `type`
   * where it has no code (an empty one, or Anthropic's shape); null for a success.
   */
  errorCode: string | null;
  stream: boolean;
  /** From arrival to the last byte. */
  latencyMs: number;
  /** From arrival to the first byte of the answer; null when nothing was sent. */
  firstByteMs: number | null;
  /** Debited by the settlement, nano-USD (the ledger holds the exact charge). */
  costNanos: bigint;
  /** Bodies only for models whose catalog entry turns `log_bodies` on, cut at its size cap. */
  requestBody: string | null;
  responseBody: string | null;
}

export interface RequestLogRecord extends RequestLogEntry {
  id: number;
  /** The account's and the key's names, joined when the log is read; null when unknown (or the row has none). */
  accountName: string | null;
  keyName: string | null;
}

/** The request log sorts newest first: by arrival, then id. */
export interface RequestLogCursor {
  at: Date;
  id: number;
}

export interface RequestLogFilter {
  /** Arrived at or after. */
  from?: Date;
  /** Arrived before. */
  to?: Date;
  accountId?: string;
  keyId?: string;
  model?: string;
  /** The client surface (endpoint), as the rows name it. */
  surface?: string;
  status?: number;
  requestId?: string;
  /** Only the errors: a status of 400 or more, or an error code (a stream that failed midway answered 200). */
  errorsOnly?: boolean;
}

/**
 * How usage is grouped: by UTC day or hour of the charge, by model, by key, or by endpoint (the
 * client surface: the charge's from its hold, the logged request's from its route).
 */
/** A time range: at or after `from`, before `to`. */
export interface TimeRange {
  from?: Date;
  to?: Date;
}

/** Which audit entries to read: of one kind of target, of one target, in a time range. */
export interface AuditFilter extends TimeRange {
  targetType?: string;
  targetId?: string;
}

export type UsageGrouping = 'day' | 'hour' | 'model' | 'key' | 'account' | 'endpoint';

// ---- Outages in sight: request-log figures and target rotations (migration 0013) ----

/** What the request-log figures are grouped by besides time. */
export type HealthGrouping = 'model' | 'target';

/** Nearest-rank percentiles and the maximum of a duration, in milliseconds. */
export interface DurationFigures {
  p50: number;
  p95: number;
  max: number;
}

/** One UTC hour or day of one model's or target's logged requests. */
export interface HealthRow {
  bucketStart: Date;
  group: string;
  requests: number;
  /** Requests that ended with an error code. */
  errors: number;
  /** From arrival to the last byte, over every request. */
  latencyMs: DurationFigures;
  /** From arrival to the first byte, over the requests that were sent one; null when none was. */
  firstByteMs: DurationFigures | null;
}

/** A target (or provider) taken out of rotation by one process. */
export interface NewTargetRotation {
  target: string;
  scope: 'target' | 'provider';
  provider: string;
  instance: string;
  downAt: Date;
  failureKind: string | null;
  failureStatus: number | null;
  coolingUntil: Date | null;
}

export interface TargetRotation extends NewTargetRotation {
  id: number;
  /** When the same process saw it answer again; null while it is still out (or the process ended first). */
  upAt: Date | null;
}

export interface UsageRange {
  accountId?: string;
  /** One key's usage only. */
  keyId?: string;
  /** At or after. */
  from?: Date;
  /** Before. */
  to?: Date;
}

export interface UsageGroupRow extends TokenCounts {
  /**
   * The model id, the key id (empty when none), the endpoint (`unknown` for charges from before
   * migration 0012, empty for logged requests to no endpoint), or the start of the UTC day or hour
   * (ISO 8601).
   */
  group: string;
  /** Charges. */
  requests: number;
  costNanos: bigint;
  /** Cost upstreams reported beyond the holds, not billed. */
  excessNanos: bigint;
}

export interface ErrorCountRow {
  group: string;
  /** Logged requests that ended with an error code. */
  errors: number;
}

/** A key read by id (or prefix): the accounts' port has it, and billing reads a key's budget through it. */
export interface KeyLookup {
  /** By id, or else by prefix. */
  findKey(idOrPrefix: string): Promise<ApiKeyRecord | undefined>;
}

/**
 * The money port: holds (opened, settled, checkpointed, expired), the append-only ledger, balance
 * credits and debits, and key budgets' spend. Everything src/billing/ uses of the store.
 */
export interface MoneyStore extends KeyLookup, SliceStore {
  /**
   * Opens a hold atomically if the account's balance less its open holds covers `amountNanos`.
   * Returns false (and changes nothing) when it does not, or when the account is disabled. With
   * `keyBudget`, also only if the key's budget covers it; rejects with `KeyBudgetExceededError` (and
   * changes nothing) when it does not.
   */
  openHold(hold: NewHold): Promise<boolean>;
  /**
   * Settles an open hold exactly once: releases its reservation and, when `charge` is given and
   * costs or counts anything, appends one charge entry and subtracts its cost from the balance
   * (and appends an `excess` entry when the charge carries one).
   * Returns false when the hold was already settled or expired (nothing changes then).
   * With `slice` and no row of the hold: settled out of the slice, its row written as settled (a
   * retry finds it); false when the slice is gone or cannot cover it.
   */
  settleHold(holdId: string, charge: Charge | null, slice?: SliceHold): Promise<boolean>;
  /**
   * Records running requests' metered usage and pushes their holds' expiry, in one transaction.
   * Holds no longer open are skipped.
   */
  checkpointHolds(checkpoints: readonly HoldCheckpoint[]): Promise<void>;
  /**
   * Ends holds whose expiry has passed (left behind by a crash): each settles its last checkpoint
   * (a charge, never more than the hold) and releases the rest. Returns how many.
   */
  releaseExpiredHolds(now: Date): Promise<number>;
  /** Holds still open for an account (for tests and the CLI). */
  countOpenHolds(accountId?: string): Promise<number>;
  /** Adds a credit entry to the ledger and the amount to the balance, atomically. */
  credit(accountId: string, amountNanos: bigint, note: string | null, audit?: AuditDraft<AccountRecord>): Promise<AccountRecord>;
  /**
   * Appends a debit entry and subtracts the amount, atomically, only if the balance less its open
   * holds covers it (so a balance never goes below zero). Returns undefined when it does not.
   */
  debit(accountId: string, amountNanos: bigint, note: string | null, audit?: AuditDraft<AccountRecord>): Promise<AccountRecord | undefined>;
  listLedger(accountId: string): Promise<LedgerEntry[]>;
  /** One page of an account's ledger in a time range, newest first; the cursor is an entry id. */
  listLedgerPage(accountId: string, range: TimeRange, page: PageRequest<number>): Promise<Page<LedgerEntry, number>>;
  /** The key's spend in one budget period (zero when it has none there). */
  keySpend(keyId: string, window: BudgetWindow): Promise<KeySpend>;
}

/** The accounts port: accounts, API keys, admin tokens, console sessions and the audit log. */
export interface AccountStore extends KeyLookup {
  createAccount(account: { id: string; name: string; openingBalanceNanos: bigint }, audit?: AuditDraft<AccountRecord>): Promise<AccountRecord>;
  listAccounts(): Promise<AccountRecord[]>;
  /** By id, or else by name. */
  findAccount(idOrName: string): Promise<AccountRecord | undefined>;
  /**
   * Returns false when no such account exists. A disabled account's keys are refused (401), and
   * disabling ends the console sessions its keys opened (enabling it again does not bring them back).
   */
  setAccountDisabled(accountId: string, disabled: boolean, audit?: AuditDraft<AccountRecord>): Promise<boolean>;
  /**
   * One page of accounts with their spend in `range` (charges) and their last request, sorted by
   * creation, name, spend or last use, on the server.
   */
  listAccountActivity(filter: AccountFilter, sort: { by: AccountSort; descending: boolean }, range: TimeRange, page: PageRequest<AccountListCursor>): Promise<Page<AccountActivityRecord, AccountListCursor>>;
  /** Returns false when no such account exists. */
  renameAccount(accountId: string, name: string, audit?: AuditDraft<AccountRecord>): Promise<boolean>;
  /**
   * Sets an account's low-balance threshold (null removes it) and re-arms its `balance.low` alert,
   * so a new threshold is judged afresh. Returns false when no such account exists.
   */
  setLowBalanceThreshold(accountId: string, thresholdNanos: bigint | null, audit?: AuditDraft<AccountRecord>): Promise<boolean>;
  createKey(key: ApiKeyRecord, audit?: AuditDraft<ApiKeyRecord>): Promise<void>;
  listKeys(accountId?: string): Promise<ApiKeyRecord[]>;
  /**
   * Returns false when no such key exists, or it is deleted. Disabling ends the console sessions the
   * key opened (enabling it again does not bring them back).
   */
  setKeyDisabled(keyId: string, disabled: boolean, audit?: AuditDraft<ApiKeyRecord>): Promise<boolean>;
  findKeyByHash(hash: string): Promise<KeyWithAccount | undefined>;
  /**
   * A number that grows with every change to keys or accounts (disable, enable, create), so that
   * caches in any process can tell they are stale with one cheap read.
   */
  revision(): Promise<number>;
  /** One page of keys, oldest first. */
  listKeysPage(filter: KeyFilter, page: PageRequest<KeyCursor>): Promise<Page<ApiKeyRecord, KeyCursor>>;
  /** Changes a key's settings. Returns false when no such key exists, or it is deleted. */
  updateKey(keyId: string, changes: KeyChanges, audit?: AuditDraft<ApiKeyRecord>): Promise<boolean>;
  /**
   * Gives a key a new secret (hash and prefix): the old one is refused from then on, and the console
   * sessions the key opened end. False when no such live key.
   */
  rotateKey(keyId: string, secret: { prefix: string; hash: string }, audit?: AuditDraft<ApiKeyRecord>): Promise<boolean>;
  /**
   * Marks a key deleted (its ledger history stays) and ends its console sessions. False when no such
   * key exists, or it is deleted already.
   */
  deleteKey(keyId: string, audit?: AuditDraft<ApiKeyRecord>): Promise<boolean>;
  createAdminToken(token: AdminTokenRecord, audit?: AuditDraft<AdminTokenRecord>): Promise<void>;
  listAdminTokens(): Promise<AdminTokenRecord[]>;
  /** By id, or else by prefix. */
  findAdminToken(idOrPrefix: string): Promise<AdminTokenRecord | undefined>;
  findAdminTokenByHash(hash: string): Promise<AdminTokenRecord | undefined>;
  /**
   * Returns false when no such token exists. Disabling ends the console sessions the token opened
   * (enabling it again does not bring them back).
   */
  setAdminTokenDisabled(tokenId: string, disabled: boolean, audit?: AuditDraft<AdminTokenRecord>): Promise<boolean>;
  /**
   * Appends an audit row for an admin action that changes nothing stored (a target test): the
   * row is the whole record of it.
   */
  recordAudit(entry: NewAuditEntry): Promise<AuditEntry>;
  /** One page of the audit log, oldest first; the cursor is an entry id. */
  /** One page of the audit log, newest first; the cursor is an entry id. */
  listAudit(filter: AuditFilter, page: PageRequest<number>): Promise<Page<AuditEntry, number>>;
  /** Keeps a web console session, and deletes the sessions that have expired by its `createdAt`. */
  createConsoleSession(session: ConsoleSessionRecord): Promise<void>;
  /** A session by the hash of its id, expired or not: the caller compares `expiresAt`. */
  findConsoleSession(hash: string): Promise<ConsoleSessionRecord | undefined>;
  /** Ends a session (logout); nothing happens when there is none. */
  deleteConsoleSession(hash: string): Promise<void>;
}

/**
 * The operations port: the schema and the connection (migrate, close), stored responses, running
 * instances, the request log, usage reports, and alerts (claims, deliveries, the scans that fire them).
 */
export interface OperationsStore {
  /** Creates or upgrades the schema. Idempotent; safe while other processes use the database. */
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** `sqlite` or `postgres`. */
  readonly engine: 'sqlite' | 'postgres';
  /** Keeps a response; written before the final event is sent. Replaces one with the same id. */
  saveResponse(response: StoredResponse): Promise<void>;
  /** A stored response of this account (another account's is not found). */
  findResponse(id: string, accountId: string): Promise<StoredResponse | undefined>;
  /** Returns false when this account has no such response. */
  deleteResponse(id: string, accountId: string): Promise<boolean>;
  /** Records that this instance is alive (insert or refresh). */
  heartbeat(instance: InstanceRecord): Promise<void>;
  /** Instances seen since `since`, this one included. */
  liveInstances(since: Date): Promise<InstanceRecord[]>;
  removeInstance(id: string): Promise<void>;
  /** Charges grouped by model. */
  usageReport(filter: { accountId?: string; since?: Date }): Promise<UsageRow[]>;
  /** Appends log rows in one statement (a batch from the writer, never one per request). */
  appendRequestLog(entries: readonly RequestLogEntry[]): Promise<void>;
  /** One page of the request log, newest first; with `bodies: false` the bodies are not read (null). */
  listRequestLog(filter: RequestLogFilter, page: PageRequest<RequestLogCursor>, options?: { bodies?: boolean }): Promise<Page<RequestLogRecord, RequestLogCursor>>;
  /** Deletes at most `limit` of the oldest rows that arrived before `before`; returns how many. */
  pruneRequestLog(before: Date, limit: number): Promise<number>;
  /** Charges and excess from the ledger, summed per group, sorted by group. */
  usageBy(grouping: UsageGrouping, range: UsageRange): Promise<UsageGroupRow[]>;
  /** Logged requests with an error code, counted per group, sorted by group. */
  requestErrorsBy(grouping: UsageGrouping, range: UsageRange): Promise<ErrorCountRow[]>;
  /** The request log's counts and durations per UTC hour or day and per model or target in `[from, to)`, by bucket then group. */
  requestHealthBy(grouping: HealthGrouping, bucket: 'hour' | 'day', range: { from: Date; to: Date }): Promise<HealthRow[]>;
  /** Records a target taken out of rotation by this instance. */
  openTargetRotation(rotation: NewTargetRotation): Promise<void>;
  /** Closes this instance's open rotation of the target: it is back. */
  closeTargetRotation(closing: { target: string; instance: string; upAt: Date }): Promise<void>;
  /** Rotations overlapping `[from, to)`, newest first, at most `limit`. */
  listTargetRotations(filter: { from: Date; to: Date; target?: string; limit: number }): Promise<TargetRotation[]>;
  /**
   * Accounts whose balance less holds is below their threshold and not yet claimed (to fire), or
   * back at or above it while claimed (to re-arm): one query over the accounts with a threshold.
   */
  lowBalanceCrossings(limit: number): Promise<LowBalanceCrossing[]>;
  /**
   * Live keys whose spend in the current period (`current`: the window of each period kind now) is
   * at least 80% of their budget and that have not yet been alerted at every level they reached.
   */
  keyBudgetLevels(current: readonly BudgetWindow[], limit: number): Promise<KeyBudgetLevel[]>;
  /** Charges in `[from, to)`: the total, and the `top` accounts by spend (most first, then by id). */
  spendReport(range: { from: Date; to: Date }, top: number): Promise<SpendReport>;
  /**
   * Claims a condition and queues its deliveries in one transaction. Returns false, queuing
   * nothing, when the claim is held already (another instance saw the same crossing first).
   */
  claimAlert(claim: AlertClaim, deliveries: readonly NewAlertDelivery[]): Promise<boolean>;
  /** Re-arms a condition: its next crossing fires again. */
  releaseAlertClaim(claim: AlertClaim): Promise<void>;
  /** Queues deliveries of an event that needs no claim. A delivery already queued is kept as it is. */
  enqueueAlertDeliveries(deliveries: readonly NewAlertDelivery[]): Promise<void>;
  /**
   * Takes up to `limit` pending deliveries for these webhooks that are due at `now`: each one's
   * attempt count goes up and its next attempt moves to `leaseUntil`, so no other instance takes
   * it while this attempt runs (and any instance retries it if this one dies).
   */
  claimAlertDeliveries(request: { webhookIds: readonly string[]; now: Date; leaseUntil: Date; limit: number }): Promise<AlertDelivery[]>;
  /** Records how an attempt ended; a delivery no longer pending is left as it is. */
  finishAlertDelivery(id: number, outcome: AlertDeliveryOutcome): Promise<void>;
  /** Deliveries, newest first; the cursor is a delivery id. */
  listAlertDeliveries(filter: { state?: AlertDeliveryState }, page: PageRequest<number>): Promise<Page<AlertDelivery, number>>;
  /**
   * Queues a delivery again, as a new row with a new event id (`resend_of` in its envelope names
   * the first), audited in the same transaction; undefined when there is no delivery `id`.
   */
  resendAlertDelivery(resend: AlertResend): Promise<AlertDelivery | undefined>;
  /** Deletes up to `limit` deliveries created before `before`, whatever their state; returns how many. */
  pruneAlertDeliveries(before: Date, limit: number): Promise<number>;
}

/** One version of the runtime catalog (migration 0014). */
export interface CatalogVersionRecord {
  id: number;
  /** The catalog document (providers and models) as put, secrets replaced by a marker. */
  document: unknown;
  /** Provider name → its sealed upstream secret; null when none. */
  secrets: Record<string, string> | null;
  note: string | null;
  /** Null for the file's seed and the CLI. */
  adminTokenId: string | null;
  createdAt: Date;
}

export interface NewCatalogVersion {
  document: unknown;
  secrets: Record<string, string> | null;
  note: string | null;
  adminTokenId: string | null;
  /** The audit row written with it (target `catalog`, the new version's id; `version` added to after). */
  audit?: { action: string; before: unknown; after: Record<string, unknown> };
}

/** The catalog port (docs/architecture.md, "The catalog at runtime"): versions, append-only. */
export interface CatalogStore {
  /** The newest version's id (the catalog's revision); null while there is none. */
  latestCatalogVersionId(): Promise<number | null>;
  findCatalogVersion(id: number): Promise<CatalogVersionRecord | undefined>;
  /** Newest first, at most `limit`, ids below `before` when given. */
  listCatalogVersions(limit: number, before?: number): Promise<CatalogVersionRecord[]>;
  /** Appends the next version, with its audit row, in one transaction. */
  appendCatalogVersion(version: NewCatalogVersion): Promise<CatalogVersionRecord>;
  /** Writes version 1 when there is no version yet; undefined (nothing written) otherwise. */
  seedCatalogVersion(version: NewCatalogVersion): Promise<CatalogVersionRecord | undefined>;
}

/** The whole store, for the composition root (open-store.ts, server/, cli/): every port at once. */
export type Store = MoneyStore & AccountStore & OperationsStore & CatalogStore;

/** A condition that fires once until it clears: `balance.low` of an account, a key's budget level in a period. */
export interface AlertClaim {
  kind: string;
  subjectId: string;
  /** '' when the condition has no periods. */
  scope: string;
}

export type AlertDeliveryState = 'pending' | 'delivered' | 'abandoned';

export interface NewAlertDelivery {
  eventId: string;
  eventType: string;
  webhookId: string;
  /** The JSON body, sent byte for byte on every attempt. */
  body: string;
  createdAt: Date;
}

export interface AlertDelivery extends NewAlertDelivery {
  id: number;
  state: AlertDeliveryState;
  attempts: number;
  nextAttemptAt: Date;
  finishedAt: Date | null;
  lastError: string | null;
}

export interface SpendReport {
  totalNanos: bigint;
  requests: number;
  /** Accounts with a charge in the period. */
  accounts: number;
  top: Array<{ accountId: string; accountName: string; costNanos: bigint; requests: number }>;
}

export interface AlertResend {
  /** The delivery sent again. */
  id: number;
  /** The new row's event id. */
  eventId: string;
  /** Who asked (null: the CLI). */
  adminTokenId: string | null;
}

export type AlertDeliveryOutcome =
  | { state: 'delivered'; at: Date }
  | { state: 'pending'; nextAttemptAt: Date; error: string }
  | { state: 'abandoned'; at: Date; error: string };

export interface LowBalanceCrossing {
  accountId: string;
  accountName: string;
  balanceNanos: bigint;
  reservedNanos: bigint;
  thresholdNanos: bigint;
  /** `below`: fire (no claim yet); `recovered`: re-arm (claimed, and back at or above). */
  direction: 'below' | 'recovered';
}
