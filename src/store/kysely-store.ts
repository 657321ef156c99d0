/**
 * The Store over Kysely: one set of queries for SQLite and PostgreSQL. Accounts, keys and the
 * revision counter live here; holds, the ledger, stored responses, the instance heartbeat and console
 * sessions in hold-queries.ts, ledger-queries.ts, response-queries.ts, instance-queries.ts and
 * console-session-queries.ts; key changes and key budgets in key-queries.ts and key-budget-queries.ts.
 * Built by open-store.ts, which knows the engine-specific parts (connection, transactions,
 * migration locking) and hands them in.
 */
import type { Kysely } from 'kysely';
import type { Database, StoreEngine } from './schema.js';
import type {
  AlertClaim,
  AlertDelivery,
  AlertDeliveryOutcome,
  AlertDeliveryState,
  LowBalanceCrossing,
  NewAlertDelivery,
  AccountCursor,
  AccountFilter,
  AccountRecord,
  AdminTokenRecord,
  AuditDraft,
  AuditEntry,
  ConsoleSessionRecord,
  Page,
  PageRequest,
  ApiKeyRecord,
  BudgetWindow,
  Charge,
  KeyBudgetLevel,
  KeyChanges,
  KeyCursor,
  KeyFilter,
  KeySpend,
  KeyWithAccount,
  LedgerEntry,
  InstanceRecord,
  HoldCheckpoint,
  ErrorCountRow,
  RequestLogCursor,
  RequestLogEntry,
  RequestLogFilter,
  RequestLogRecord,
  UsageGrouping,
  UsageGroupRow,
  UsageRange,
  NewHold,
  Store,
  StoredResponse,
  UsageRow,
} from './store.js';
import * as admin from './admin-queries.js';
import * as alerts from './alert-queries.js';
import { auditedChange, readAccount, readAdminToken, readKey } from './audited-change.js';
import * as consoleSessions from './console-session-queries.js';
import * as holds from './hold-queries.js';
import * as keys from './key-queries.js';
import type { Transact } from './hold-queries.js';
import { GroupCommit } from './group-commit.js';
import { checkpointOperation, MAX_HOLD_BATCH_SIZE, openOperation, settleOperation, type HoldBatchCommit, type HoldOperation } from './hold-operations.js';
import * as instances from './instance-queries.js';
import * as ledger from './ledger-queries.js';
import * as requestLog from './request-log-queries.js';
import * as responses from './response-queries.js';
import type { SqliteBatchCommit, SqliteBatchOperation } from './sqlite/sqlite-hold-statements.js';
import * as usage from './usage-queries.js';
import {
  decodeAccount,
  decodeApiKey,
  encodeModels,
  toEpochMilliseconds,
  toSafeNumber,
} from './row-decoding.js';

export interface KyselyStoreParts {
  db: Kysely<Database>;
  engine: StoreEngine;
  transact: Transact;
  /** Applies pending migrations in the engine's safe way. */
  migrate: () => Promise<void>;
  /** The clock for `created_at` columns; tests pass a fixed one. */
  now: () => Date;
  /** Releases what Kysely does not: it destroys only a driver it has started. */
  afterClose?: () => void;
  /** Applies a batch of hold operations in one transaction, the engine's way (group commit). */
  commitHoldOperations: HoldBatchCommit;
  /** Told the size of every committed batch of hold operations (metrics, tests). */
  onHoldCommit?: (operations: number) => void;
  /**
   * SQLite's writes through statements prepared once, used instead of Kysely's: `commit` (which
   * also serves as `commitHoldOperations`) takes stored responses' saves into the hold batches, and
   * `appendRequestLog` writes a request-log batch (request-log-queries.ts).
   */
  sqlite?: {
    commit: SqliteBatchCommit;
    appendRequestLog: (entries: readonly RequestLogEntry[]) => Promise<void>;
  };
}

/** Columns of `api_keys` read into a record, prefixed so they can share a row with an account. */
const KEY_COLUMNS = [
  'api_keys.id as key_id',
  'api_keys.account_id as key_account_id',
  'api_keys.name as key_name',
  'api_keys.prefix as key_prefix',
  'api_keys.hash as key_hash',
  'api_keys.models as key_models',
  'api_keys.requests_per_window as key_requests_per_window',
  'api_keys.tokens_per_minute as key_tokens_per_minute',
  'api_keys.expires_at as key_expires_at',
  'api_keys.disabled as key_disabled',
  'api_keys.created_at as key_created_at',
  'api_keys.budget_nanos as key_budget_nanos',
  'api_keys.budget_period as key_budget_period',
  'api_keys.deleted_at as key_deleted_at',
] as const;

export class KyselyStore implements Store {
  readonly engine: StoreEngine;
  private readonly db: Kysely<Database>;
  private readonly transact: Transact;
  private readonly applyMigrations: () => Promise<void>;
  private readonly now: () => Date;

  private readonly afterClose: () => void;
  /** Opens, settles and checkpoints of many requests, written together (group-commit.ts). */
  private readonly holdQueue: GroupCommit<HoldOperation, boolean> | GroupCommit<SqliteBatchOperation, boolean>;
  /** SQLite: the same queue, which also takes stored responses' saves. */
  private readonly sqliteQueue: GroupCommit<SqliteBatchOperation, boolean> | undefined;
  private readonly appendLog: (entries: readonly RequestLogEntry[]) => Promise<void>;

  constructor(parts: KyselyStoreParts) {
    this.db = parts.db;
    this.engine = parts.engine;
    this.transact = parts.transact;
    this.applyMigrations = parts.migrate;
    this.now = parts.now;
    this.afterClose = parts.afterClose ?? (() => undefined);
    const sqlite = parts.sqlite;
    if (sqlite === undefined) {
      this.holdQueue = new GroupCommit({ commit: parts.commitHoldOperations, maxBatchSize: MAX_HOLD_BATCH_SIZE, onCommit: parts.onHoldCommit });
      this.sqliteQueue = undefined;
      this.appendLog = (entries) => requestLog.appendRequestLog(this.db, entries);
    } else {
      const onHoldCommit = parts.onHoldCommit;
      // Told the hold operations of each batch, saves left out; batches commit one at a time, so
      // the count is still the batch's own when GroupCommit reports it.
      let holdOperations = 0;
      this.sqliteQueue = new GroupCommit<SqliteBatchOperation, boolean>({
        commit: (operations) => {
          holdOperations = operations.reduce((count, operation) => (operation.kind === 'save-response' ? count : count + 1), 0);
          return sqlite.commit(operations);
        },
        maxBatchSize: MAX_HOLD_BATCH_SIZE,
        onCommit:
          onHoldCommit === undefined
            ? undefined
            : () => {
                if (holdOperations > 0) onHoldCommit(holdOperations);
              },
      });
      this.holdQueue = this.sqliteQueue;
      this.appendLog = sqlite.appendRequestLog;
    }
  }

  migrate(): Promise<void> {
    return this.applyMigrations();
  }

  async close(): Promise<void> {
    // What requests queued is written before the connection goes; nothing new is taken.
    await this.holdQueue.close();
    await this.db.destroy();
    this.afterClose();
  }

  async createAccount(account: { id: string; name: string; openingBalanceNanos: bigint }, audit?: AuditDraft<AccountRecord>): Promise<AccountRecord> {
    ledger.assertNonNegativeAmount(account.openingBalanceNanos, 'opening balance');
    const createdAt = this.nowMilliseconds();
    await this.transact((transaction) => this.auditAccount(transaction, account.id, audit, async () => {
      await transaction
        .insertInto('accounts')
        .values({
          id: account.id,
          name: account.name,
          balance_nanos: account.openingBalanceNanos,
          reserved_nanos: 0n,
          disabled: 0,
          created_at: createdAt,
        })
        .execute();
      // The opening balance is a credit like any other, so that balance = Σcredits − Σcharges.
      if (account.openingBalanceNanos > 0n) {
        await ledger.appendLedgerEntry(transaction, {
          accountId: account.id,
          kind: 'credit',
          amountNanos: account.openingBalanceNanos,
          requestId: null,
          keyId: null,
          model: null,
          tokens: ledger.NO_TOKENS,
          note: 'opening balance',
          createdAt,
        });
      }
      await bumpRevision(transaction);
      return true;
    }));
    return this.requireAccount(account.id);
  }

  async listAccounts(): Promise<AccountRecord[]> {
    const rows = await this.db.selectFrom('accounts').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
    return rows.map(decodeAccount);
  }

  async findAccount(idOrName: string): Promise<AccountRecord | undefined> {
    const byId = await this.db.selectFrom('accounts').selectAll().where('id', '=', idOrName).executeTakeFirst();
    if (byId !== undefined) return decodeAccount(byId);
    const byName = await this.db.selectFrom('accounts').selectAll().where('name', '=', idOrName).executeTakeFirst();
    return byName === undefined ? undefined : decodeAccount(byName);
  }

  async credit(accountId: string, amountNanos: bigint, note: string | null, audit?: AuditDraft<AccountRecord>): Promise<AccountRecord> {
    if (typeof amountNanos !== 'bigint' || amountNanos <= 0n) throw new RangeError(`credit amount must be a bigint > 0, got ${String(amountNanos)}`);
    const createdAt = this.nowMilliseconds();
    await this.transact((transaction) => this.auditAccount(transaction, accountId, audit, async () => {
      const updated = await transaction
        .updateTable('accounts')
        .set((eb) => ({ balance_nanos: eb('balance_nanos', '+', amountNanos) }))
        .where('id', '=', accountId)
        .executeTakeFirst();
      if (updated.numUpdatedRows !== 1n) throw new Error(`no account with id ${JSON.stringify(accountId)}`);
      await ledger.appendLedgerEntry(transaction, {
        accountId,
        kind: 'credit',
        amountNanos,
        requestId: null,
        keyId: null,
        model: null,
        tokens: ledger.NO_TOKENS,
        note,
        createdAt,
      });
      await bumpRevision(transaction);
      return true;
    }));
    return this.requireAccount(accountId);
  }

  listAccountsPage(filter: AccountFilter, page: PageRequest<AccountCursor>): Promise<Page<AccountRecord, AccountCursor>> {
    return admin.listAccountsPage(this.db, this.engine, filter, page);
  }

  async renameAccount(accountId: string, name: string, audit?: AuditDraft<AccountRecord>): Promise<boolean> {
    return this.transact((transaction) => this.auditAccount(transaction, accountId, audit, async () => {
      const updated = await transaction.updateTable('accounts').set({ name }).where('id', '=', accountId).executeTakeFirst();
      if (updated.numUpdatedRows !== 1n) return false;
      await bumpRevision(transaction);
      return true;
    }));
  }

  async debit(accountId: string, amountNanos: bigint, note: string | null, audit?: AuditDraft<AccountRecord>): Promise<AccountRecord | undefined> {
    if (typeof amountNanos !== 'bigint' || amountNanos <= 0n) throw new RangeError(`debit amount must be a bigint > 0, got ${String(amountNanos)}`);
    const createdAt = this.nowMilliseconds();
    const done = await this.transact((transaction) => this.auditAccount(transaction, accountId, audit, async () => {
      // The guard is in the UPDATE itself, so concurrent debits and holds cannot pass it together.
      const updated = await transaction
        .updateTable('accounts')
        .set((eb) => ({ balance_nanos: eb('balance_nanos', '-', amountNanos) }))
        .where('id', '=', accountId)
        .where((eb) => eb(eb('balance_nanos', '-', eb.ref('reserved_nanos')), '>=', amountNanos))
        .executeTakeFirst();
      if (updated.numUpdatedRows !== 1n) return false;
      await ledger.appendLedgerEntry(transaction, {
        accountId,
        kind: 'debit',
        amountNanos,
        requestId: null,
        keyId: null,
        model: null,
        tokens: ledger.NO_TOKENS,
        note,
        createdAt,
      });
      await bumpRevision(transaction);
      return true;
    }));
    return done ? this.requireAccount(accountId) : undefined;
  }

  async createKey(key: ApiKeyRecord, audit?: AuditDraft<ApiKeyRecord>): Promise<void> {
    assertOptionalLimit(key.requestsPerWindow, 'requestsPerWindow');
    assertOptionalLimit(key.tokensPerMinute, 'tokensPerMinute');
    await this.transact((transaction) => this.auditKey(transaction, key.id, audit, async () => {
      const account = await transaction.selectFrom('accounts').select('id').where('id', '=', key.accountId).executeTakeFirst();
      if (account === undefined) throw new Error(`no account with id ${JSON.stringify(key.accountId)}`);
      await transaction
        .insertInto('api_keys')
        .values({
          id: key.id,
          account_id: key.accountId,
          name: key.name,
          prefix: key.prefix,
          hash: key.hash,
          models: encodeModels(key.models),
          requests_per_window: key.requestsPerWindow,
          tokens_per_minute: key.tokensPerMinute,
          expires_at: key.expiresAt === null ? null : toEpochMilliseconds(key.expiresAt, 'expiresAt'),
          disabled: key.disabled ? 1 : 0,
          created_at: toEpochMilliseconds(key.createdAt, 'createdAt'),
          budget_nanos: key.budget?.limitNanos ?? null,
          budget_period: key.budget?.period ?? null,
        })
        .execute();
      await bumpRevision(transaction);
      return true;
    }));
  }

  async listKeys(accountId?: string): Promise<ApiKeyRecord[]> {
    let query = this.db.selectFrom('api_keys').selectAll();
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const rows = await query.orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
    return rows.map(decodeApiKey);
  }

  async findKey(idOrPrefix: string): Promise<ApiKeyRecord | undefined> {
    const byId = await this.db.selectFrom('api_keys').selectAll().where('id', '=', idOrPrefix).executeTakeFirst();
    if (byId !== undefined) return decodeApiKey(byId);
    // Prefixes are 12 characters of a random secret: unique in practice, but not by constraint.
    const byPrefix = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('prefix', '=', idOrPrefix)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .executeTakeFirst();
    return byPrefix === undefined ? undefined : decodeApiKey(byPrefix);
  }

  async setKeyDisabled(keyId: string, disabled: boolean, audit?: AuditDraft<ApiKeyRecord>): Promise<boolean> {
    return this.transact((transaction) => this.auditKey(transaction, keyId, audit, async () => {
      const updated = await transaction
        .updateTable('api_keys')
        .set({ disabled: disabled ? 1 : 0 })
        .where('id', '=', keyId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (updated.numUpdatedRows !== 1n) return false;
      if (disabled) await consoleSessions.endKeySessions(transaction, keyId);
      await bumpRevision(transaction);
      return true;
    }));
  }

  /** Returns false when no such account exists. */
  async setAccountDisabled(accountId: string, disabled: boolean, audit?: AuditDraft<AccountRecord>): Promise<boolean> {
    return this.transact((transaction) => this.auditAccount(transaction, accountId, audit, async () => {
      const updated = await transaction.updateTable('accounts').set({ disabled: disabled ? 1 : 0 }).where('id', '=', accountId).executeTakeFirst();
      if (updated.numUpdatedRows !== 1n) return false;
      if (disabled) await consoleSessions.endAccountSessions(transaction, accountId);
      await bumpRevision(transaction);
      return true;
    }));
  }

  async findKeyByHash(hash: string): Promise<KeyWithAccount | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select(KEY_COLUMNS)
      .select(['accounts.id', 'accounts.name', 'accounts.balance_nanos', 'accounts.reserved_nanos', 'accounts.disabled', 'accounts.created_at', 'accounts.low_balance_threshold_nanos'])
      .where('api_keys.hash', '=', hash)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      key: decodeApiKey({
        id: row.key_id,
        account_id: row.key_account_id,
        name: row.key_name,
        prefix: row.key_prefix,
        hash: row.key_hash,
        models: row.key_models,
        requests_per_window: row.key_requests_per_window,
        tokens_per_minute: row.key_tokens_per_minute,
        expires_at: row.key_expires_at,
        disabled: row.key_disabled,
        created_at: row.key_created_at,
        budget_nanos: row.key_budget_nanos,
        budget_period: row.key_budget_period,
        deleted_at: row.key_deleted_at,
      }),
      account: decodeAccount(row),
    };
  }

  async revision(): Promise<number> {
    const row = await this.db.selectFrom('revision').select('value').where('id', '=', 1).executeTakeFirstOrThrow();
    return toSafeNumber(row.value, 'revision.value');
  }

  async openHold(hold: NewHold): Promise<boolean> {
    return this.holdQueue.submit(openOperation(hold, this.now()));
  }

  async settleHold(holdId: string, charge: Charge | null): Promise<boolean> {
    return this.holdQueue.submit(settleOperation(holdId, charge, this.now()));
  }

  async checkpointHolds(checkpoints: readonly HoldCheckpoint[]): Promise<void> {
    const operation = checkpointOperation(checkpoints);
    if (checkpoints.length > 0) await this.holdQueue.submit(operation);
  }

  releaseExpiredHolds(now: Date): Promise<number> {
    return holds.releaseExpiredHolds(this.db, this.transact, now);
  }

  countOpenHolds(accountId?: string): Promise<number> {
    return holds.countOpenHolds(this.db, accountId);
  }

  listLedger(accountId: string): Promise<LedgerEntry[]> {
    return ledger.listLedger(this.db, accountId);
  }

  async usageReport(filter: { accountId?: string; since?: Date }): Promise<UsageRow[]> {
    const rows = await usage.usageBy(this.db, 'model', { accountId: filter.accountId, from: filter.since });
    return rows.map(({ group, ...totals }) => ({ model: group, ...totals }));
  }

  listLedgerPage(accountId: string, page: PageRequest<number>): Promise<Page<LedgerEntry, number>> {
    return admin.listLedgerPage(this.db, accountId, page);
  }

  async createAdminToken(token: AdminTokenRecord, audit?: AuditDraft<AdminTokenRecord>): Promise<void> {
    await this.transact((transaction) =>
      auditedChange(transaction, { engine: this.engine, type: 'admin_token', id: token.id, read: readAdminToken }, audit, this.now(), async () => {
        await admin.createAdminToken(transaction, token);
        return true;
      }),
    );
  }

  listAdminTokens(): Promise<AdminTokenRecord[]> {
    return admin.listAdminTokens(this.db);
  }

  findAdminToken(idOrPrefix: string): Promise<AdminTokenRecord | undefined> {
    return admin.findAdminToken(this.db, idOrPrefix);
  }

  findAdminTokenByHash(hash: string): Promise<AdminTokenRecord | undefined> {
    return admin.findAdminTokenByHash(this.db, hash);
  }

  setAdminTokenDisabled(tokenId: string, disabled: boolean, audit?: AuditDraft<AdminTokenRecord>): Promise<boolean> {
    return this.transact((transaction) =>
      auditedChange(transaction, { engine: this.engine, type: 'admin_token', id: tokenId, read: readAdminToken }, audit, this.now(), async () => {
        if (!(await admin.setAdminTokenDisabled(transaction, tokenId, disabled))) return false;
        if (disabled) await consoleSessions.endAdminTokenSessions(transaction, tokenId);
        return true;
      }),
    );
  }

  listAudit(filter: { targetType?: string; targetId?: string }, page: PageRequest<number>): Promise<Page<AuditEntry, number>> {
    return admin.listAudit(this.db, filter, page);
  }

  createConsoleSession(session: ConsoleSessionRecord): Promise<void> {
    return consoleSessions.createConsoleSession(this.db, session);
  }

  findConsoleSession(hash: string): Promise<ConsoleSessionRecord | undefined> {
    return consoleSessions.findConsoleSession(this.db, hash);
  }

  deleteConsoleSession(hash: string): Promise<void> {
    return consoleSessions.deleteConsoleSession(this.db, hash);
  }

  async saveResponse(response: StoredResponse): Promise<void> {
    if (this.sqliteQueue === undefined) return responses.saveResponse(this.db, response);
    // Checked and encoded here, so a bad response fails its own call only; the write goes with the
    // next hold batch and resolves once that has committed (sqlite-hold-statements.ts).
    await this.sqliteQueue.submit({ kind: 'save-response', row: responses.responseRow(response) });
  }

  findResponse(id: string, accountId: string): Promise<StoredResponse | undefined> {
    return responses.findResponse(this.db, id, accountId);
  }

  deleteResponse(id: string, accountId: string): Promise<boolean> {
    return responses.deleteResponse(this.db, id, accountId);
  }

  heartbeat(instance: InstanceRecord): Promise<void> {
    return instances.heartbeat(this.db, instance);
  }

  liveInstances(since: Date): Promise<InstanceRecord[]> {
    return instances.liveInstances(this.db, since);
  }

  removeInstance(id: string): Promise<void> {
    return instances.removeInstance(this.db, id);
  }

  // ---- Request log and usage by group (migration 0007) ----

  appendRequestLog(entries: readonly RequestLogEntry[]): Promise<void> {
    return this.appendLog(entries);
  }

  listRequestLog(filter: RequestLogFilter, page: PageRequest<RequestLogCursor>, options?: { bodies?: boolean }): Promise<Page<RequestLogRecord, RequestLogCursor>> {
    return requestLog.listRequestLog(this.db, filter, page, options);
  }

  pruneRequestLog(before: Date, limit: number): Promise<number> {
    return requestLog.pruneRequestLog(this.db, before, limit);
  }

  usageBy(grouping: UsageGrouping, range: UsageRange): Promise<UsageGroupRow[]> {
    return usage.usageBy(this.db, grouping, range);
  }

  requestErrorsBy(grouping: UsageGrouping, range: UsageRange): Promise<ErrorCountRow[]> {
    return usage.requestErrorsBy(this.db, grouping, range);
  }

  // ── Alerts (migration 0009; see alert-queries.ts) ──────────────────────────────────────────────

  setLowBalanceThreshold(accountId: string, thresholdNanos: bigint | null, audit?: AuditDraft<AccountRecord>): Promise<boolean> {
    return this.transact((transaction) => this.auditAccount(transaction, accountId, audit, () => alerts.setLowBalanceThreshold(transaction, accountId, thresholdNanos)));
  }

  lowBalanceCrossings(limit: number): Promise<LowBalanceCrossing[]> {
    return alerts.lowBalanceCrossings(this.db, limit);
  }

  claimAlert(claim: AlertClaim, deliveries: readonly NewAlertDelivery[]): Promise<boolean> {
    return alerts.claimAlert(this.transact, claim, deliveries, this.now());
  }

  releaseAlertClaim(claim: AlertClaim): Promise<void> {
    return alerts.releaseAlertClaim(this.db, claim);
  }

  enqueueAlertDeliveries(deliveries: readonly NewAlertDelivery[]): Promise<void> {
    return alerts.enqueueAlertDeliveries(this.db, deliveries);
  }

  claimAlertDeliveries(request: { webhookIds: readonly string[]; now: Date; leaseUntil: Date; limit: number }): Promise<AlertDelivery[]> {
    return alerts.claimAlertDeliveries(this.db, request);
  }

  finishAlertDelivery(id: number, outcome: AlertDeliveryOutcome): Promise<void> {
    return alerts.finishAlertDelivery(this.db, id, outcome);
  }

  listAlertDeliveries(filter: { state?: AlertDeliveryState }, page: PageRequest<number>): Promise<Page<AlertDelivery, number>> {
    return alerts.listAlertDeliveries(this.db, filter, page);
  }

  pruneAlertDeliveries(before: Date, limit: number): Promise<number> {
    return alerts.pruneAlertDeliveries(this.db, before, limit);
  }

  // ---- Keys administration and key budgets (migration 0006) ----

  listKeysPage(filter: KeyFilter, page: PageRequest<KeyCursor>): Promise<Page<ApiKeyRecord, KeyCursor>> {
    return keys.listKeysPage(this.db, filter, page);
  }

  async updateKey(keyId: string, changes: KeyChanges, audit?: AuditDraft<ApiKeyRecord>): Promise<boolean> {
    if (changes.requestsPerWindow !== undefined) assertOptionalLimit(changes.requestsPerWindow, 'requestsPerWindow');
    if (changes.tokensPerMinute !== undefined) assertOptionalLimit(changes.tokensPerMinute, 'tokensPerMinute');
    if (changes.budget !== undefined && changes.budget !== null) ledger.assertNonNegativeAmount(changes.budget.limitNanos, 'budget');
    return this.transact((transaction) => this.auditKey(transaction, keyId, audit, async () => {
      if (!(await keys.updateKey(transaction, keyId, changes))) return false;
      await bumpRevision(transaction);
      return true;
    }));
  }

  async rotateKey(keyId: string, secret: { prefix: string; hash: string }, audit?: AuditDraft<ApiKeyRecord>): Promise<boolean> {
    return this.transact((transaction) => this.auditKey(transaction, keyId, audit, async () => {
      if (!(await keys.rotateKey(transaction, keyId, secret))) return false;
      await consoleSessions.endKeySessions(transaction, keyId);
      await bumpRevision(transaction);
      return true;
    }));
  }

  async deleteKey(keyId: string, audit?: AuditDraft<ApiKeyRecord>): Promise<boolean> {
    const at = this.now();
    return this.transact((transaction) => this.auditKey(transaction, keyId, audit, async () => {
      if (!(await keys.deleteKey(transaction, keyId, at))) return false;
      await consoleSessions.endKeySessions(transaction, keyId);
      await bumpRevision(transaction);
      return true;
    }));
  }

  keySpend(keyId: string, window: BudgetWindow): Promise<KeySpend> {
    return keys.keySpend(this.db, keyId, window);
  }

  keyBudgetLevels(current: readonly BudgetWindow[], limit: number): Promise<KeyBudgetLevel[]> {
    return keys.keyBudgetLevels(this.db, current, limit);
  }

  private auditKey(transaction: Kysely<Database>, keyId: string, audit: AuditDraft<ApiKeyRecord> | undefined, change: () => Promise<boolean>): Promise<boolean> {
    return auditedChange(transaction, { engine: this.engine, type: 'key', id: keyId, read: readKey }, audit, this.now(), change);
  }

  private auditAccount(transaction: Kysely<Database>, accountId: string, audit: AuditDraft<AccountRecord> | undefined, change: () => Promise<boolean>): Promise<boolean> {
    return auditedChange(transaction, { engine: this.engine, type: 'account', id: accountId, read: readAccount }, audit, this.now(), change);
  }

  private nowMilliseconds(): number {
    return toEpochMilliseconds(this.now(), 'now');
  }

  private async requireAccount(accountId: string): Promise<AccountRecord> {
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    return decodeAccount(row);
  }
}

/**
 * Every change to keys or accounts (create, credit, disable, enable) moves the counter, inside the
 * same transaction. Holds and settles do not: they change balances on every request, and a cache
 * keyed on the revision would never stay warm; spending is checked atomically by openHold instead.
 */
async function bumpRevision(transaction: Kysely<Database>): Promise<void> {
  await transaction
    .updateTable('revision')
    .set((eb) => ({ value: eb('value', '+', 1n) }))
    .where('id', '=', 1)
    .execute();
}

function assertOptionalLimit(value: number | null, field: string): void {
  if (value !== null && (!Number.isSafeInteger(value) || value < 0 || value > 2_147_483_647)) {
    throw new RangeError(`${field} must be null or an integer from 0 to 2147483647, got ${String(value)}`);
  }
}
