/**
 * The request path's money operations on SQLite, group-committed (group-commit.ts): a batch of
 * opens, settles and checkpoints from many requests runs in one `BEGIN IMMEDIATE` transaction,
 * through statements prepared once (compiling each query through Kysely and preparing it again on
 * every request was more than half of the gateway's CPU per request before). Each operation keeps
 * its own guarded SQL, a guarded UPDATE first, so races are decided by the database exactly as when
 * it was a transaction of its own, and each keeps its own outcome. A hold admitted from a quota
 * slice settles, or reaches its first checkpoint, through sqlite-slice-statements.ts in the same batch.
 *
 * Two ways to run a batch, both in one transaction:
 * - Plainly, the common case: the operations one after the other, with no savepoint. An expected
 *   refusal leaves no trace without one: a balance that cannot cover a hold fails the guarded
 *   UPDATE, which changes nothing; a key budget that cannot cover it (checked after the balance's
 *   reservation) fails its guarded upsert, which changes nothing, and the reservation is taken back
 *   by its exact inverse before the next operation runs. A settle of a hold that is no longer open
 *   changes nothing either.
 * - One savepoint per operation, only when an operation failed unexpectedly (a broken foreign key,
 *   a constraint, a bad value): the plain run is rolled back as a whole and the batch is run again
 *   this way, so that the failed operation is rolled back and reported alone while the rest commit.
 *   Operations are deterministic (their clocks were read when they were queued), so the second run
 *   decides the others as the first would have without the failed one.
 * Stored responses are saved in the same batches (`SqliteBatchOperation`): a Responses request's
 * save shares the transaction of whatever holds were queued with it instead of a transaction of its
 * own, and resolves, like them, only once that transaction has committed.
 * The work runs while holding Kysely's connection mutex, so it never interleaves with a Kysely
 * transaction on the same connection.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Outcome } from '../group-commit.js';
import type { HoldOperation } from '../hold-operations.js';
import { heldBudgetOf, RESERVE_KEY_BUDGET_SQL, reserveKeyBudgetParameters, SETTLE_KEY_SPEND_SQL, settleKeySpendParameters } from '../queries/key-budget-queries.js';
import { chargeCountsAnything, EXCESS_NOTE } from '../queries/ledger-queries.js';
import { responseOfAnotherAccount, SAVE_RESPONSE_SQL, saveResponseParameters, type ResponseRowValues } from '../queries/response-queries.js';
import { toBigInt, toEpochMilliseconds, toNullableText, toText } from '../queries/row-decoding.js';
import type { Database } from '../schema.js';
import { APPEND_CHARGE_SQL, APPEND_EXCESS_SQL, RELEASE_HOLD_SQL, SETTLE_HOLD_SQL } from '../queries/settlement-sql.js';
import type { SliceHold } from '../slice-records.js';
import { KeyBudgetExceededError, type Charge, type HoldCheckpoint, type NewHold } from '../store.js';
import { prepareSliceStatements } from './sqlite-slice-statements.js';

/** A stored response's save, checked and encoded before it is queued (response-queries.ts). */
export interface SaveResponseOperation {
  kind: 'save-response';
  row: ResponseRowValues;
}

/** What a SQLite batch takes: the hold operations, and stored responses' saves. */
export type SqliteBatchOperation = HoldOperation | SaveResponseOperation;

/**
 * Applies a batch in one transaction and resolves once it has committed: per operation, whether it
 * took effect (a hold opened, a hold settled; a checkpoint is always true; a save is true) or the
 * error that failed it alone (a save: another account's id). Rejects when the transaction failed as
 * a whole; then nothing of the batch committed.
 */
export type SqliteBatchCommit = (operations: readonly SqliteBatchOperation[]) => Promise<Array<Outcome<boolean>>>;

interface Prepared {
  commit: (operations: readonly SqliteBatchOperation[]) => Array<Outcome<boolean>>;
}

function prepare(connection: BetterSqlite3.Database): Prepared {
  const reserve = connection.prepare(
    'UPDATE accounts SET reserved_nanos = reserved_nanos + ? WHERE id = ? AND disabled = 0 AND balance_nanos - reserved_nanos >= ?',
  );
  const insertHold = connection.prepare(
    "INSERT INTO holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, budget_period, budget_period_start, surface) VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?)",
  );
  const markSettled = connection.prepare(SETTLE_HOLD_SQL);
  const reserveKeyBudget = connection.prepare(RESERVE_KEY_BUDGET_SQL);
  const settleKeySpend = connection.prepare(SETTLE_KEY_SPEND_SQL);
  const release = connection.prepare(RELEASE_HOLD_SQL);
  const appendCharge = connection.prepare(APPEND_CHARGE_SQL);
  const appendExcess = connection.prepare(APPEND_EXCESS_SQL);
  const recordCheckpoint = connection.prepare(
    `UPDATE holds SET expires_at = ?, checkpoint_cost_nanos = ?, checkpoint_input_tokens = ?, checkpoint_cached_input_tokens = ?,
       checkpoint_output_tokens = ?, checkpoint_reasoning_tokens = ? WHERE id = ? AND state = 'open'`,
  );

  const slices = prepareSliceStatements(connection);
  const saveResponse = connection.prepare(SAVE_RESPONSE_SQL);
  // The exact inverse of `reserve`, for a hold its key's budget then refused.
  const unreserve = connection.prepare('UPDATE accounts SET reserved_nanos = reserved_nanos - ? WHERE id = ?');

  // Each operation below writes nothing when it is refused; it throws only for the unexpected,
  // possibly after writing, and its caller then rolls back (the batch, or the operation's savepoint).
  const open = (hold: NewHold, createdAt: number): Outcome<boolean> => {
    const budget = hold.keyBudget;
    // Everything that could throw on a bad value is read before the first write.
    const budgetParameters = budget === undefined ? undefined : reserveKeyBudgetParameters(hold.keyId, budget, hold.amountNanos);
    const expiresAt = toEpochMilliseconds(hold.expiresAt, 'hold expiresAt');
    const budgetStart = budget === undefined ? null : toEpochMilliseconds(budget.start, 'budget period start');
    if (reserve.run(hold.amountNanos, hold.accountId, hold.amountNanos).changes !== 1) return NOT_DONE;
    // The key's budget (key-budget-queries.ts): a refusal changes nothing, and taking the balance's
    // reservation back leaves the account as it was, so the refused hold leaves no trace.
    if (budgetParameters !== undefined && reserveKeyBudget.run(...budgetParameters).changes !== 1) {
      if (unreserve.run(hold.amountNanos, hold.accountId).changes !== 1) throw new Error(`account ${hold.accountId} vanished while its hold was refused`);
      return { ok: false, error: new KeyBudgetExceededError(hold.keyId) };
    }
    insertHold.run(hold.id, hold.accountId, hold.keyId, hold.requestId, hold.model, hold.amountNanos, expiresAt, createdAt, budget?.period ?? null, budgetStart, hold.surface ?? null);
    return DONE;
  };
  const settle = (holdId: string, charge: Charge | null, createdAt: number, slice: SliceHold | undefined): Outcome<boolean> => {
    const billed = charge !== null && chargeCountsAnything(charge.costNanos, charge);
    const costNanos = billed ? charge.costNanos : 0n;
    const row = markSettled.get(holdId) as { account_id: unknown; amount_nanos: unknown; key_id: unknown; budget_period: unknown; budget_period_start: unknown; surface: unknown } | undefined;
    let accountId: string;
    let surface: string | null;
    if (row !== undefined) {
      accountId = toText(row.account_id, 'holds.account_id');
      // The charge's endpoint is the hold's (settlement-sql.ts).
      surface = toNullableText(row.surface, 'holds.surface');
      const heldNanos = toBigInt(row.amount_nanos, 'holds.amount_nanos');
      release.run(heldNanos, costNanos, accountId);
      const heldBudget = heldBudgetOf(row);
      if (heldBudget !== undefined) settleKeySpend.run(...settleKeySpendParameters(heldBudget, heldNanos, costNanos));
    } else {
      // No open row: admitted from a slice and never checkpointed, or settled (or expired) already.
      if (slice === undefined || !slices.settle(holdId, slice, costNanos)) return NOT_DONE;
      accountId = slice.accountId;
      surface = slice.surface ?? null;
    }
    if (billed) {
      appendCharge.run(
        accountId,
        costNanos,
        charge.requestId,
        charge.keyId,
        charge.model,
        charge.inputTokens,
        charge.cachedInputTokens,
        charge.cacheWriteInputTokens ?? 0,
        charge.outputTokens,
        charge.reasoningTokens,
        null,
        createdAt,
        surface,
      );
      if (charge.excessNanos > 0n) appendExcess.run(accountId, charge.excessNanos, charge.requestId, charge.keyId, charge.model, EXCESS_NOTE, createdAt, surface);
    }
    return DONE;
  };
  const checkpoint = (checkpoints: readonly HoldCheckpoint[]): Outcome<boolean> => {
    for (const each of checkpoints) {
      const expiresAt = toEpochMilliseconds(each.expiresAt, 'hold expiresAt');
      // A hold admitted from a slice becomes an ordinary open hold at its first checkpoint.
      if (each.slice !== undefined) slices.convert(each.holdId, each.slice, expiresAt);
      // The sweep that settles it caps the cost at the hold again (hold-queries.ts, releaseOne).
      const { tokens } = each;
      recordCheckpoint.run(
        expiresAt,
        each.costNanos,
        tokens.inputTokens,
        tokens.cachedInputTokens,
        tokens.outputTokens,
        tokens.reasoningTokens,
        each.holdId,
      );
    }
    return DONE;
  };

  const save = (row: ResponseRowValues): Outcome<boolean> =>
    // Another account's id: the guarded upsert changes nothing.
    saveResponse.run(...saveResponseParameters(row)).changes === 1 ? DONE : { ok: false, error: responseOfAnotherAccount(row.id) };

  const apply = (operation: SqliteBatchOperation): Outcome<boolean> => {
    switch (operation.kind) {
      case 'save-response':
        return save(operation.row);
      case 'open':
        return open(operation.hold, operation.createdAt);
      case 'settle':
        return settle(operation.holdId, operation.charge, operation.createdAt, operation.slice);
      case 'checkpoint':
        return checkpoint(operation.checkpoints);
    }
  };

  // The common case: no savepoint. An operation that throws rolls the whole transaction back.
  const commitPlainly = connection.transaction((operations: readonly SqliteBatchOperation[]): Array<Outcome<boolean>> => {
    const outcomes = new Array<Outcome<boolean>>(operations.length);
    for (let index = 0; index < operations.length; index++) {
      try {
        outcomes[index] = apply(operations[index] as SqliteBatchOperation);
      } catch (error) {
        throw new OperationFailed(error, !connection.inTransaction);
      }
    }
    return outcomes;
  });
  // Called inside `commitOneByOne`'s transaction, this transaction function becomes a savepoint.
  const applyInSavepoint = connection.transaction(apply);
  const commitOneByOne = connection.transaction((operations: readonly SqliteBatchOperation[]): Array<Outcome<boolean>> =>
    operations.map((operation) => {
      try {
        return applyInSavepoint(operation);
      } catch (error) {
        // SQLite itself ended the transaction (an I/O error, a full disk): nothing of the batch stands.
        if (!connection.inTransaction) throw error;
        return { ok: false, error };
      }
    }),
  );
  return {
    commit: (operations) => {
      try {
        return commitPlainly.immediate(operations);
      } catch (error) {
        // Failing to begin or to commit fails the batch as a whole, as does an operation's failure
        // that ended the transaction itself; any other failure was one operation's own.
        if (!(error instanceof OperationFailed)) throw error;
        if (error.transactionEnded) throw error.error;
        return commitOneByOne.immediate(operations);
      }
    },
  };
}

const DONE: Outcome<boolean> = Object.freeze({ ok: true, value: true });
const NOT_DONE: Outcome<boolean> = Object.freeze({ ok: true, value: false });

/** An operation of a plain run threw: the run is rolled back, then redone one savepoint each. */
class OperationFailed {
  constructor(
    readonly error: unknown,
    /** SQLite ended the transaction itself; redoing the batch would not help. */
    readonly transactionEnded: boolean,
  ) {}
}

/** The group commit's `commit` on SQLite. */
export function createSqliteHoldBatchCommit(db: Kysely<Database>, connection: BetterSqlite3.Database): SqliteBatchCommit {
  // Prepared on first use: the tables exist only once the store has been migrated.
  let prepared: Prepared | undefined;
  return (operations) => db.connection().execute(async () => (prepared ??= prepare(connection)).commit(operations));
}
