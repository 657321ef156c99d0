/**
 * The request path's money operations on SQLite, group-committed (group-commit.ts): a batch of
 * opens, settles and checkpoints from many requests runs in one `BEGIN IMMEDIATE` transaction,
 * through statements prepared once (compiling each query through Kysely and preparing it again on
 * every request was more than half of the gateway's CPU per request before). Each operation keeps
 * its own guarded SQL, a guarded UPDATE first, so races are decided by the database exactly as when
 * it was a transaction of its own; it runs inside a savepoint (better-sqlite3 nests transaction
 * functions that way), so one that fails is rolled back and reported alone while the rest commit.
 * The work runs while holding Kysely's connection mutex, so it never interleaves with a Kysely
 * transaction on the same connection.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Outcome } from './group-commit.js';
import type { HoldBatchCommit, HoldOperation } from './hold-operations.js';
import { heldBudgetOf, RESERVE_KEY_BUDGET_SQL, reserveKeyBudgetParameters, SETTLE_KEY_SPEND_SQL, settleKeySpendParameters } from './key-budget-queries.js';
import { chargeCountsAnything, EXCESS_NOTE } from './ledger-queries.js';
import { toBigInt, toEpochMilliseconds, toText } from './row-decoding.js';
import type { Database } from './schema.js';
import { KeyBudgetExceededError, type Charge, type HoldCheckpoint, type NewHold } from './store.js';

interface Prepared {
  commit: (operations: readonly HoldOperation[]) => Array<Outcome<boolean>>;
}

function prepare(connection: BetterSqlite3.Database): Prepared {
  const reserve = connection.prepare(
    'UPDATE accounts SET reserved_nanos = reserved_nanos + ? WHERE id = ? AND disabled = 0 AND balance_nanos - reserved_nanos >= ?',
  );
  const insertHold = connection.prepare(
    "INSERT INTO holds (id, account_id, key_id, request_id, model, amount_nanos, state, expires_at, created_at, budget_period, budget_period_start) VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?)",
  );
  const markSettled = connection.prepare(
    "UPDATE holds SET state = 'settled' WHERE id = ? AND state = 'open' RETURNING account_id, amount_nanos, key_id, budget_period, budget_period_start",
  );
  const reserveKeyBudget = connection.prepare(RESERVE_KEY_BUDGET_SQL);
  const settleKeySpend = connection.prepare(SETTLE_KEY_SPEND_SQL);
  const release = connection.prepare('UPDATE accounts SET reserved_nanos = reserved_nanos - ?, balance_nanos = balance_nanos - ? WHERE id = ?');
  const appendCharge = connection.prepare(
    `INSERT INTO ledger (account_id, kind, amount_nanos, request_id, key_id, model, input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_tokens, note, created_at)
     VALUES (?, 'charge', ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
  );
  const appendExcess = connection.prepare(
    `INSERT INTO ledger (account_id, kind, amount_nanos, request_id, key_id, model, note, created_at) VALUES (?, 'excess', ?, ?, ?, ?, ?, ?)`,
  );
  const recordCheckpoint = connection.prepare(
    `UPDATE holds SET expires_at = ?, checkpoint_cost_nanos = ?, checkpoint_input_tokens = ?, checkpoint_cached_input_tokens = ?,
       checkpoint_output_tokens = ?, checkpoint_reasoning_tokens = ? WHERE id = ? AND state = 'open'`,
  );

  const open = connection.transaction((hold: NewHold, createdAt: number): boolean => {
    if (reserve.run(hold.amountNanos, hold.accountId, hold.amountNanos).changes !== 1) return false;
    // The key's budget, in the same savepoint (key-budget-queries.ts): a refusal rolls the hold back.
    if (hold.keyBudget !== undefined && reserveKeyBudget.run(...reserveKeyBudgetParameters(hold.keyId, hold.keyBudget, hold.amountNanos)).changes !== 1) {
      throw new KeyBudgetExceededError(hold.keyId);
    }
    const budgetStart = hold.keyBudget === undefined ? null : toEpochMilliseconds(hold.keyBudget.start, 'budget period start');
    insertHold.run(
      hold.id,
      hold.accountId,
      hold.keyId,
      hold.requestId,
      hold.model,
      hold.amountNanos,
      toEpochMilliseconds(hold.expiresAt, 'hold expiresAt'),
      createdAt,
      hold.keyBudget?.period ?? null,
      budgetStart,
    );
    return true;
  });
  const settle = connection.transaction((holdId: string, charge: Charge | null, createdAt: number): boolean => {
    const row = markSettled.get(holdId) as { account_id: unknown; amount_nanos: unknown; key_id: unknown; budget_period: unknown; budget_period_start: unknown } | undefined;
    if (row === undefined) return false;
    const accountId = toText(row.account_id, 'holds.account_id');
    const billed = charge !== null && chargeCountsAnything(charge.costNanos, charge);
    const costNanos = billed ? charge.costNanos : 0n;
    const heldNanos = toBigInt(row.amount_nanos, 'holds.amount_nanos');
    release.run(heldNanos, costNanos, accountId);
    const heldBudget = heldBudgetOf(row);
    if (heldBudget !== undefined) settleKeySpend.run(...settleKeySpendParameters(heldBudget, heldNanos, costNanos));
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
        createdAt,
      );
      if (charge.excessNanos > 0n) appendExcess.run(accountId, charge.excessNanos, charge.requestId, charge.keyId, charge.model, EXCESS_NOTE, createdAt);
    }
    return true;
  });
  const checkpoint = connection.transaction((checkpoints: readonly HoldCheckpoint[]): boolean => {
    for (const each of checkpoints) {
      // The sweep that settles it caps the cost at the hold again (hold-queries.ts, releaseOne).
      const { tokens } = each;
      recordCheckpoint.run(
        toEpochMilliseconds(each.expiresAt, 'hold expiresAt'),
        each.costNanos,
        tokens.inputTokens,
        tokens.cachedInputTokens,
        tokens.outputTokens,
        tokens.reasoningTokens,
        each.holdId,
      );
    }
    return true;
  });

  const apply = (operation: HoldOperation): boolean => {
    switch (operation.kind) {
      case 'open':
        return open(operation.hold, operation.createdAt);
      case 'settle':
        return settle(operation.holdId, operation.charge, operation.createdAt);
      case 'checkpoint':
        return checkpoint(operation.checkpoints);
    }
  };
  // Called inside this transaction, each operation's own transaction function becomes a savepoint.
  const commit = connection.transaction((operations: readonly HoldOperation[]): Array<Outcome<boolean>> =>
    operations.map((operation) => {
      try {
        return { ok: true, value: apply(operation) };
      } catch (error) {
        // SQLite itself ended the transaction (an I/O error, a full disk): nothing of the batch stands.
        if (!connection.inTransaction) throw error;
        return { ok: false, error };
      }
    }),
  );
  return { commit: (operations) => commit.immediate(operations) };
}

/** The group commit's `commit` on SQLite. */
export function createSqliteHoldBatchCommit(db: Kysely<Database>, connection: BetterSqlite3.Database): HoldBatchCommit {
  // Prepared on first use: the tables exist only once the store has been migrated.
  let prepared: Prepared | undefined;
  return (operations) => db.connection().execute(async () => (prepared ??= prepare(connection)).commit(operations));
}
