/**
 * The request path's money operations on PostgreSQL, group-committed (group-commit.ts): a batch
 * is one call of `tollgate_apply_hold_operations` (migration 0011, which decides like migration
 * 0008's operation-by-operation function and writes per batch; both as migration 0012 replaced them), so one round trip and one
 * transaction for everything that arrived together. The function locks the rows it will touch in
 * one global order first, so concurrent instances never deadlock, and each operation's guard
 * decides it exactly as its own transaction did: no instance can overspend.
 *
 * Operations run without subtransactions, because a subtransaction that updates a row its parent
 * has locked costs PostgreSQL a multixact each (three times the database CPU per request,
 * measured). When one operation fails the whole call (a constraint, a deadlock), the batch is sent
 * again with each operation in its own subtransaction, so that only the bad one fails.
 *
 * The store commits batches pipelined (pipelined-group-commit.ts): a batch's transaction commits
 * with `synchronous_commit = off`, which releases its row locks without waiting for the disk, and
 * then a flush (postgres-flush.ts) makes it durable before any of its operations resolves;
 * meanwhile the next batch already runs. A batch that started from an idle queue (low load) commits
 * durably in its own statement instead (`batchCommit`), one round trip for the whole.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Outcome } from '../group-commit.js';
import type { CommittedBatch } from '../pipelined-group-commit.js';
import { batchCommit, createDurableFlush, type DurableFlush } from './postgres-flush.js';
import type { HoldOperation } from '../hold-operations.js';
import { chargeCountsAnything, EXCESS_NOTE } from '../queries/ledger-queries.js';
import type { Database } from '../schema.js';
import type { SliceHold } from '../slice-records.js';
import { KeyBudgetExceededError } from '../store.js';

/** An operation that failed on its own inside a batch, with PostgreSQL's SQLSTATE as its `code`. */
export class HoldOperationError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'HoldOperationError';
  }
}

/**
 * SQLSTATE classes that one operation's data can cause, or that retrying cures: data exception
 * (22), integrity constraint violation (23), transaction rollback (40: deadlock, serialization),
 * PL/pgSQL raise (P0). https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
const OPERATION_ERROR = /^(22|23|40|P0)[0-9A-Z]{3}$/;

/** Applies and commits a batch without waiting for the disk; `durable` says when it is on it. */
export function createPostgresPipelinedHoldBatchCommit(
  db: Kysely<Database>,
  flush: DurableFlush = createDurableFlush(db),
): (operations: readonly HoldOperation[], underLoad: boolean) => Promise<CommittedBatch<boolean>> {
  return async (operations, underLoad) => {
    const payload = JSON.stringify(operations.map(encode));
    const commit = batchCommit(underLoad, flush);
    let outcomes: Array<Outcome<boolean>>;
    try {
      outcomes = decode(await apply(db, payload, false, commit.settings), operations);
    } catch (error) {
      if (!isOperationError(error)) throw error;
      outcomes = decode(await apply(db, payload, true, commit.settings), operations);
    }
    return { outcomes, durable: commit.durable() };
  };
}

async function apply(db: Kysely<Database>, payload: string, isolate: boolean, commitSettings: RawBuilder<unknown>): Promise<unknown> {
  // Local to this statement's transaction: how it commits (see above and postgres-flush.ts).
  const result = await sql<{ outcomes: unknown }>`select ${commitSettings}, tollgate_apply_hold_operations(${payload}::jsonb, ${isolate}) as outcomes`.execute(db);
  return result.rows[0]?.outcomes;
}

/** Whether `error` is one that one operation's data can cause (so retrying the others alone helps). */
export function isOperationError(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && OPERATION_ERROR.test(code);
}

/** The jsonb form the functions of migrations 0008, 0011, 0012 and 0015 read; 64-bit amounts as decimal strings. */
function encode(operation: HoldOperation): Record<string, unknown> {
  switch (operation.kind) {
    case 'open': {
      const { hold } = operation;
      return {
        kind: 'open',
        id: hold.id,
        account_id: hold.accountId,
        key_id: hold.keyId,
        request_id: hold.requestId,
        model: hold.model,
        amount_nanos: hold.amountNanos.toString(),
        expires_at: hold.expiresAt.getTime(),
        created_at: operation.createdAt,
        ...(hold.keyBudget !== undefined && { budget_period: hold.keyBudget.period, budget_period_start: hold.keyBudget.start.getTime() }),
        // Absent: the hold's surface is null (migration 0012). A settle sends none: it is the hold's.
        ...(hold.surface !== undefined && { surface: hold.surface }),
      };
    }
    case 'settle': {
      const { charge } = operation;
      const billed = charge !== null && chargeCountsAnything(charge.costNanos, charge);
      return {
        kind: 'settle',
        hold_id: operation.holdId,
        created_at: operation.createdAt,
        // A hold admitted from a quota slice: settled out of it when it has no row (migration 0015).
        ...(operation.slice !== undefined && { slice: encodeSlice(operation.slice) }),
        // Without a charge the hold is only released (nothing to bill, no ledger row).
        ...(billed && {
          charge: {
            request_id: charge.requestId,
            key_id: charge.keyId,
            model: charge.model,
            cost_nanos: charge.costNanos.toString(),
            excess_nanos: charge.excessNanos.toString(),
            input_tokens: charge.inputTokens,
            cached_input_tokens: charge.cachedInputTokens,
            cache_write_input_tokens: charge.cacheWriteInputTokens ?? 0,
            output_tokens: charge.outputTokens,
            reasoning_tokens: charge.reasoningTokens,
          },
          excess_note: EXCESS_NOTE,
        }),
      };
    }
    case 'checkpoint':
      return {
        kind: 'checkpoint',
        checkpoints: operation.checkpoints.map((checkpoint) => ({
          hold_id: checkpoint.holdId,
          expires_at: checkpoint.expiresAt.getTime(),
          cost_nanos: checkpoint.costNanos.toString(),
          input_tokens: checkpoint.tokens.inputTokens,
          cached_input_tokens: checkpoint.tokens.cachedInputTokens,
          output_tokens: checkpoint.tokens.outputTokens,
          reasoning_tokens: checkpoint.tokens.reasoningTokens,
          ...(checkpoint.slice !== undefined && { slice: encodeSlice(checkpoint.slice) }),
        })),
      };
  }
}

function encodeSlice(slice: SliceHold): Record<string, unknown> {
  return {
    slice_id: slice.sliceId,
    account_id: slice.accountId,
    key_id: slice.keyId,
    request_id: slice.requestId,
    model: slice.model,
    amount_nanos: slice.amountNanos.toString(),
    admitted_at: slice.admittedAt.getTime(),
    ...(slice.surface !== undefined && { surface: slice.surface }),
  };
}

function decode(outcomes: unknown, operations: readonly HoldOperation[]): Array<Outcome<boolean>> {
  const count = operations.length;
  if (!Array.isArray(outcomes) || outcomes.length !== count) throw new Error(`tollgate_apply_hold_operations returned ${JSON.stringify(outcomes)} for ${count} operations`);
  return outcomes.map((outcome: unknown, index): Outcome<boolean> => {
    if (typeof outcome === 'object' && outcome !== null) {
      const { ok, value, code, message } = outcome as Record<string, unknown>;
      if (ok === true && typeof value === 'boolean') return { ok: true, value };
      // An open that the key's budget refused (migration 0008's tollgate_open_hold answers null).
      const operation = operations[index];
      if (ok === true && value === null && operation?.kind === 'open') return { ok: false, error: new KeyBudgetExceededError(operation.hold.keyId) };
      if (ok === false && typeof code === 'string' && typeof message === 'string') return { ok: false, error: new HoldOperationError(message, code) };
    }
    throw new Error(`tollgate_apply_hold_operations returned an outcome it should not: ${JSON.stringify(outcome)}`);
  });
}
