/**
 * What the store's port classes share (account-store.ts, money-store.ts, kysely-store.ts): the
 * engine (engine.ts) with its connection and transactions, the clock, the lifecycle (migrate, close)
 * and the helpers that audit a change and move the revision counter in its transaction.
 */
import type { Kysely } from 'kysely';
import type { Engine, HoldQueue, Transact } from './engine.js';
import { auditedChange, readAccount, readKey } from './queries/audited-change.js';
import { decodeAccount, toEpochMilliseconds } from './queries/row-decoding.js';
import type { Database, StoreEngine } from './schema.js';
import type { AccountRecord, ApiKeyRecord, AuditDraft } from './store.js';

export interface StoreOptions {
  /** The clock for `created_at` columns; tests pass a fixed one. */
  now: () => Date;
}

export abstract class StoreCore {
  /** `sqlite` or `postgres`. */
  readonly engine: StoreEngine;
  protected readonly backend: Engine;
  protected readonly db: Kysely<Database>;
  protected readonly transact: Transact;
  /** The engine's group commit of opens, settles and checkpoints. */
  protected readonly holds: HoldQueue;
  protected readonly now: () => Date;

  constructor(backend: Engine, options: StoreOptions) {
    this.backend = backend;
    this.engine = backend.name;
    this.db = backend.db;
    this.transact = backend.transact;
    this.holds = backend.holds;
    this.now = options.now;
  }

  /** Creates or upgrades the schema, the engine's safe way. */
  migrate(): Promise<void> {
    return this.backend.migrate();
  }

  /** Writes what requests queued, then releases the connection. */
  close(): Promise<void> {
    return this.backend.close();
  }

  protected auditKey(transaction: Kysely<Database>, keyId: string, audit: AuditDraft<ApiKeyRecord> | undefined, change: () => Promise<boolean>): Promise<boolean> {
    return auditedChange(transaction, { engine: this.engine, type: 'key', id: keyId, read: readKey }, audit, this.now(), change);
  }

  protected auditAccount(transaction: Kysely<Database>, accountId: string, audit: AuditDraft<AccountRecord> | undefined, change: () => Promise<boolean>): Promise<boolean> {
    return auditedChange(transaction, { engine: this.engine, type: 'account', id: accountId, read: readAccount }, audit, this.now(), change);
  }

  protected nowMilliseconds(): number {
    return toEpochMilliseconds(this.now(), 'now');
  }

  protected async requireAccount(accountId: string): Promise<AccountRecord> {
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    return decodeAccount(row);
  }
}

/**
 * Every change to keys or accounts (create, credit, disable, enable) moves the counter, inside the
 * same transaction. Holds and settles do not: they change balances on every request, and a cache
 * keyed on the revision would never stay warm; spending is checked atomically by openHold instead.
 */
export async function bumpRevision(transaction: Kysely<Database>): Promise<void> {
  await transaction
    .updateTable('revision')
    .set((eb) => ({ value: eb('value', '+', 1n) }))
    .where('id', '=', 1)
    .execute();
}
