/**
 * Durability for PostgreSQL transactions that commit with `synchronous_commit = off` (the request
 * path's batches: postgres-hold-batch.ts, postgres-response-batch.ts). Such a commit releases its
 * row locks and becomes visible without waiting for the disk; it is durable once the WAL is flushed
 * past its commit record. PostgreSQL's WAL is one sequence, so a transaction that commits
 * synchronously after it flushes it too: the flush here is such a transaction, the smallest one
 * that has a commit record to flush (it only takes a transaction id). No caller is told a write
 * happened before the flush that covers it has returned, so nothing a crash could take back is
 * ever acted on; another transaction that saw the write commits after it in the WAL, so it is
 * never durable without it either.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

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

async function flushCommitted(db: Kysely<Database>): Promise<void> {
  await sql`select pg_current_xact_id()`.execute(db);
}

