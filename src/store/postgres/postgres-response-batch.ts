/**
 * Stored responses on PostgreSQL, group-committed like the holds (postgres-engine.ts): the saves of
 * many requests go in one INSERT, one transaction that commits without waiting for the disk, then
 * the shared flush (postgres-flush.ts) before any save resolves (or, for a batch that started
 * from an idle queue, one that commits durably itself: `batchCommit`), so a save is durable when it
 * resolves, as a save of its own was. Each save keeps its own result: one whose id belongs to
 * another account is not written (the same guard as response-queries.ts) and rejects alone.
 *
 * Saves of one id in one batch (an upstream that reuses ids) are written once, as the last of them:
 * one after the other they would have left the same row. When they come from different accounts,
 * or the INSERT fails as a whole for a save's data (an unknown account), every save of the batch
 * is written on its own instead, in order, so only the bad one fails. A database that cannot be
 * reached fails the whole batch.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Outcome } from '../group-commit.js';
import type { CommittedBatch } from '../pipelined-group-commit.js';
import { batchCommit, type DurableFlush } from './postgres-flush.js';
import { isOperationError } from './postgres-hold-batch.js';
import { responseOfAnotherAccount, responseRow, saveResponse, type ResponseRowValues } from '../queries/response-queries.js';
import type { Database } from '../schema.js';
import type { StoredResponse } from '../store.js';

/** A save checked and encoded before it is queued, so a bad one fails its own call only. */
export interface ResponseSave {
  stored: StoredResponse;
  row: ResponseRowValues;
}

/** Checks and encodes `stored` with the one row encoder of response-queries.ts. */
export function responseSave(stored: StoredResponse): ResponseSave {
  return { stored, row: responseRow(stored) };
}

export function createPostgresResponseBatchCommit(db: Kysely<Database>, flush: DurableFlush): (saves: readonly ResponseSave[], underLoad: boolean) => Promise<CommittedBatch<void>> {
  return async (saves, underLoad) => {
    let written: Set<string> | undefined;
    const last = lastSaveOfEachId(saves);
    const commit = batchCommit(underLoad, flush);
    if (last !== undefined) {
      try {
        written = await insertAll(db, last, commit.settings);
      } catch (error) {
        // A database that cannot be reached fails every save of the batch, as it would each alone.
        if (!isOperationError(error)) throw error;
      }
    }
    if (written === undefined) {
      // Each on its own and in order (a later save of an id replaces an earlier one): the rare path
      // stays the plain one, and the flush makes its saves durable as it does the batch's.
      const outcomes: Array<Outcome<void>> = [];
      for (const save of saves) {
        try {
          await saveResponse(db, save.stored);
          outcomes.push({ ok: true, value: undefined });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
      return { outcomes, durable: flush() };
    }
    const writtenIds = written;
    const outcomes = saves.map(({ row }): Outcome<void> =>
      writtenIds.has(row.id) ? { ok: true, value: undefined } : { ok: false, error: responseOfAnotherAccount(row.id) },
    );
    return { outcomes, durable: commit.durable() };
  };
}

/** The last save of each id, in order; undefined when one id comes from two accounts. */
function lastSaveOfEachId(saves: readonly ResponseSave[]): ResponseSave[] | undefined {
  const byId = new Map<string, ResponseSave>();
  for (const save of saves) {
    const earlier = byId.get(save.row.id);
    if (earlier !== undefined && earlier.row.account_id !== save.row.account_id) return undefined;
    // Deleted first, so that the id takes the place of its last save in the order.
    byId.delete(save.row.id);
    byId.set(save.row.id, save);
  }
  return [...byId.values()];
}

/** The ids written (inserted, or replaced for the same account). */
async function insertAll(db: Kysely<Database>, saves: readonly ResponseSave[], commitSettings: RawBuilder<unknown>): Promise<Set<string>> {
  const values = sql.join(saves.map(({ row }) => sql`(${row.id}, ${row.account_id}, ${row.response}, ${row.input_items}, ${row.created_at}::bigint)`));
  // The one-row subquery sets how this statement's transaction commits (postgres-flush.ts, `batchCommit`).
  const result = await sql<{ id: string }>`
    insert into responses (id, account_id, response, input_items, created_at)
    select saved.id, saved.account_id, saved.response, saved.input_items, saved.created_at
      from (select ${commitSettings}) as commit_settings,
           (values ${values}) as saved (id, account_id, response, input_items, created_at)
    on conflict (id) do update set response = excluded.response, input_items = excluded.input_items, created_at = excluded.created_at
     where responses.account_id = excluded.account_id
    returning id`.execute(db);
  return new Set(result.rows.map((row) => row.id));
}
