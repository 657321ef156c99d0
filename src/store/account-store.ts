/**
 * The accounts port (AccountStore in store.ts) over Kysely: accounts, API keys and the revision
 * counter here; key changes in key-queries.ts, admin tokens and the audit log in admin-queries.ts,
 * console sessions in console-session-queries.ts. Every change is audited in its own transaction
 * (audited-change.ts) and moves the revision counter.
 */
import * as activity from './queries/account-activity-queries.js';
import * as admin from './queries/admin-queries.js';
import * as alerts from './queries/alert-queries.js';
import { auditedChange, readAdminToken } from './queries/audited-change.js';
import * as consoleSessions from './queries/console-session-queries.js';
import * as keys from './queries/key-queries.js';
import * as ledger from './queries/ledger-queries.js';
import { decodeAccount, decodeApiKey, encodeModels, toEpochMilliseconds, toSafeNumber } from './queries/row-decoding.js';
import { bumpRevision, StoreCore } from './store-core.js';
import type {
  AccountActivityRecord,
  AccountFilter,
  AccountListCursor,
  AccountRecord,
  AccountSort,
  AccountStore,
  AdminTokenRecord,
  ApiKeyRecord,
  AuditDraft,
  AuditEntry,
  AuditFilter,
  ConsoleSessionRecord,
  KeyChanges,
  KeyCursor,
  KeyFilter,
  KeyWithAccount,
  NewAuditEntry,
  Page,
  PageRequest,
  TimeRange,
} from './store.js';

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

export class KyselyAccountStore extends StoreCore implements AccountStore {
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

  listAccountActivity(filter: AccountFilter, sort: { by: AccountSort; descending: boolean }, range: TimeRange, page: PageRequest<AccountListCursor>): Promise<Page<AccountActivityRecord, AccountListCursor>> {
    return activity.listAccountActivity(this.db, this.engine, filter, sort, range, page);
  }

  async renameAccount(accountId: string, name: string, audit?: AuditDraft<AccountRecord>): Promise<boolean> {
    return this.transact((transaction) => this.auditAccount(transaction, accountId, audit, async () => {
      const updated = await transaction.updateTable('accounts').set({ name }).where('id', '=', accountId).executeTakeFirst();
      if (updated.numUpdatedRows !== 1n) return false;
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

  setLowBalanceThreshold(accountId: string, thresholdNanos: bigint | null, audit?: AuditDraft<AccountRecord>): Promise<boolean> {
    return this.transact((transaction) => this.auditAccount(transaction, accountId, audit, () => alerts.setLowBalanceThreshold(transaction, accountId, thresholdNanos)));
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

  async findKeyByHash(hash: string): Promise<KeyWithAccount | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select(KEY_COLUMNS)
      .select(['accounts.id', 'accounts.name', 'accounts.balance_nanos', 'accounts.reserved_nanos', 'accounts.sliced_nanos', 'accounts.disabled', 'accounts.created_at', 'accounts.low_balance_threshold_nanos'])
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

  recordAudit(entry: NewAuditEntry): Promise<AuditEntry> {
    return admin.appendAudit(this.db, entry, this.now());
  }

  listAudit(filter: AuditFilter, page: PageRequest<number>): Promise<Page<AuditEntry, number>> {
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
}

function assertOptionalLimit(value: number | null, field: string): void {
  if (value !== null && (!Number.isSafeInteger(value) || value < 0 || value > 2_147_483_647)) {
    throw new RangeError(`${field} must be null or an integer from 0 to 2147483647, got ${String(value)}`);
  }
}
