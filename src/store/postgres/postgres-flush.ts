/**
 * Durability for PostgreSQL transactions that commit with `synchronous_commit = off` (the request
 * path's batches: postgres-hold-batch.ts, postgres-response-batch.ts). Such a commit releases its
 * row locks and becomes visible without waiting for the disk; it is durable once the WAL is written
 * and flushed past its commit record, which otherwise happens when the WAL writer gets to it (up to
 * three times `wal_writer_delay` later), not before the client is answered.
 *
 * The flush is a transaction that makes PostgreSQL flush the WAL at its own commit. PostgreSQL's
 * log is one sequence, so flushing up to this commit record flushes every commit record before it:
 * every batch that had committed when the flush began. A commit waits for that flush only when its
 * transaction has a transaction id, wrote WAL before its commit record, and runs with
 * `synchronous_commit` above `off` (RecordTransactionCommit in PostgreSQL's xact.c). Taking an id
 * alone (`pg_current_xact_id()`, this file's first form) writes no WAL, so such a commit was
 * asynchronous too and flushed nothing: with the WAL writer paused and the server killed, every
 * charge acknowledged meanwhile was gone after the restart. `pg_logical_emit_message(true, …)`
 * takes an id and writes one small WAL record (an empty message with the prefix `tollgate`, which
 * only logical decoding ever reads); it needs no privilege and works at every `wal_level`.
 *
 * The flush commits at the level the server has for the gateway's connections (so with a
 * synchronous standby it waits for the standby, as every plain commit does, and `remote_apply` is
 * kept), except that `off` becomes `local`: the promise that a charge is on disk before its answer
 * ends holds even when an operator turned synchronous commits off, without waiting for a standby
 * the operator did not ask for. The test: test/e2e/postgres-durability.test.ts.
 *
 * No caller is told a write happened before the flush that covers it has returned, so nothing a
 * crash could take back is ever acted on; another transaction that saw the write commits after it
 * in the WAL, so it is never durable without it either.
 *
 * At low load there is nothing to pipeline: a batch that started from an idle queue commits at the
 * flush's level in its own statement, with the flush's WAL record (`batchCommit`), which saves the
 * flush's round trip and transaction. Durability is the same: PostgreSQL flushes the log up to
 * that commit before the statement returns.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../schema.js';

/** Resolves once every transaction that committed before the call is durable. */
export type DurableFlush = () => Promise<void>;

/**
 * One flush runs at a time: a call made while one runs waits for the next, which starts when that
 * one ends and covers every commit made meanwhile (group commit, one level down). A failed flush
 * rejects its callers; the next call starts a new one.
 */
export function createDurableFlush(db: Kysely<Database>): DurableFlush {
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const start = (): Promise<void> => {
    const flush = flushCommitted(db).finally(() => {
      if (running === flush) running = undefined;
    });
    running = flush;
    return flush;
  };
  return () => {
    if (running === undefined) return start();
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
}

/** The server's `synchronous_commit` for this transaction, but never `off` (see above). */
const FLUSH_LEVEL = sql`case current_setting('synchronous_commit') when 'off' then 'local' else current_setting('synchronous_commit') end`;

/** Makes the transaction it is selected in commit as the flush does: at FLUSH_LEVEL, with WAL of its own. */
const COMMIT_DURABLY = sql`set_config('synchronous_commit', ${FLUSH_LEVEL}, true), pg_logical_emit_message(true, 'tollgate', '')`;

/** Makes the transaction it is selected in commit without waiting for the disk (a flush follows). */
const COMMIT_WITHOUT_WAITING = sql`set_config('synchronous_commit', 'off', true)`;

/**
 * What a batch selects to set how its transaction commits. A batch that started from an idle queue
 * (`underLoad` false, group-commit.ts: nothing waited behind the one before) has nothing to
 * pipeline with: it commits as the flush would, in its own statement, durable at its commit, one
 * round trip and one transaction fewer. Its own WAL record makes that commit flush the log even
 * when the batch wrote nothing, so what it read from other processes' commits (which may still
 * wait for their flush) is on disk before it answers, as after a flush. A batch under load commits
 * without waiting, and the caller flushes.
 */
export function batchCommit(underLoad: boolean, flush: DurableFlush): BatchCommit {
  return underLoad ? { settings: COMMIT_WITHOUT_WAITING, durable: flush } : { settings: COMMIT_DURABLY, durable: committedDurably };
}

/** How one batch commits: what its statement selects, and what makes it durable once committed. */
export interface BatchCommit {
  settings: RawBuilder<unknown>;
  durable: () => Promise<void>;
}

/** A batch that committed durably has nothing to wait for. */
const committedDurably = (): Promise<void> => Promise.resolve();

async function flushCommitted(db: Kysely<Database>): Promise<void> {
  await sql`select ${COMMIT_DURABLY}`.execute(db);
}
