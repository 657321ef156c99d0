/**
 * The money port (MoneyStore in store.ts) over Kysely: holds opened, settled and checkpointed
 * through the engine's group commit (hold-operations.ts checks each before it is queued; each engine
 * applies a batch its own way), expired holds swept (hold-queries.ts), quota slices granted,
 * closed, renewed, recalled and swept (slice-queries.ts), credits and debits with their ledger
 * entries, the append-only ledger (ledger-queries.ts) and key budgets' spend.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import * as admin from './queries/admin-queries.js';
import { KyselyAccountStore } from './account-store.js';
import { checkpointOperation, openOperation, settleOperation } from './hold-operations.js';
import * as holds from './queries/hold-queries.js';
import * as keys from './queries/key-queries.js';
import * as ledger from './queries/ledger-queries.js';
import * as slices from './queries/slice-queries.js';
import { bumpRevision } from './store-core.js';
import type {
  AccountRecord,
  AuditDraft,
  BudgetWindow,
  Charge,
  HoldCheckpoint,
  KeySpend,
  LedgerEntry,
  MoneyStore,
  NewHold,
  Page,
  PageRequest,
  TimeRange,
} from './store.js';
import type { SliceHold, SliceRecord, SliceRequest } from './slice-records.js';

export class KyselyMoneyStore extends KyselyAccountStore implements MoneyStore {
  async openHold(hold: NewHold): Promise<boolean> {
    return this.holds.submit(openOperation(hold, this.now()));
  }

  async settleHold(holdId: string, charge: Charge | null, slice?: SliceHold): Promise<boolean> {
    return this.holds.submit(settleOperation(holdId, charge, this.now(), slice));
  }

  async checkpointHolds(checkpoints: readonly HoldCheckpoint[]): Promise<void> {
    const operation = checkpointOperation(checkpoints);
    if (checkpoints.length > 0) await this.holds.submit(operation);
  }

  releaseExpiredHolds(now: Date): Promise<number> {
    return holds.releaseExpiredHolds(this.db, this.transact, now);
  }

  countOpenHolds(accountId?: string): Promise<number> {
    return holds.countOpenHolds(this.db, accountId);
  }

  grantSlice(request: SliceRequest): Promise<SliceRecord | undefined> {
    return slices.grantSlice(this.transact, this.engine, request, this.now());
  }

  closeSlice(sliceId: string, owner: string, returnNanos: bigint): Promise<boolean> {
    return slices.closeSlice(this.transact, this.engine, sliceId, owner, returnNanos);
  }

  renewSlices(owner: string, sliceIds: readonly string[], leaseUntil: Date): Promise<string[]> {
    return slices.renewSlices(this.transact, this.engine, owner, sliceIds, leaseUntil);
  }

  recallSlices(accountId: string, exceptOwner: string): Promise<string[]> {
    return slices.recallSlices(this.transact, this.engine, accountId, exceptOwner);
  }

  recalledSlices(owner: string): Promise<string[]> {
    return slices.recalledSlices(this.db, owner);
  }

  dropClosedSlices(owner: string): Promise<void> {
    return slices.dropClosedSlices(this.transact, this.engine, owner);
  }

  releaseExpiredSlices(now: Date): Promise<number> {
    return slices.releaseExpiredSlices(this.db, this.transact, this.engine, now);
  }

  listSlices(accountId?: string): Promise<SliceRecord[]> {
    return slices.listSlices(this.db, accountId);
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
      return appendAdjustment(transaction, { accountId, kind: 'credit', amountNanos, note, createdAt });
    }));
    return this.requireAccount(accountId);
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
      return appendAdjustment(transaction, { accountId, kind: 'debit', amountNanos, note, createdAt });
    }));
    return done ? this.requireAccount(accountId) : undefined;
  }

  listLedger(accountId: string): Promise<LedgerEntry[]> {
    return ledger.listLedger(this.db, accountId);
  }

  listLedgerPage(accountId: string, range: TimeRange, page: PageRequest<number>): Promise<Page<LedgerEntry, number>> {
    return admin.listLedgerPage(this.db, accountId, range, page);
  }

  keySpend(keyId: string, window: BudgetWindow): Promise<KeySpend> {
    return keys.keySpend(this.db, keyId, window);
  }
}

/**
 * An operator's credit or debit on the ledger, inside the transaction that moved the balance, and
 * the revision bumped so that every instance's key cache rereads the account.
 */
async function appendAdjustment(
  transaction: Kysely<Database>,
  adjustment: { accountId: string; kind: 'credit' | 'debit'; amountNanos: bigint; note: string | null; createdAt: number },
): Promise<true> {
  await ledger.appendLedgerEntry(transaction, { ...adjustment, requestId: null, keyId: null, model: null, tokens: ledger.NO_TOKENS });
  await bumpRevision(transaction);
  return true;
}
