/**
 * The PostgreSQL engine (engine.ts): a connection pool under Kysely, with the request path's writes
 * group-committed and pipelined (pipelined-group-commit.ts). Opens, settles and checkpoints go to
 * `tollgate_apply_hold_operations` (postgres-hold-batch.ts), stored responses to one INSERT per
 * batch (postgres-response-batch.ts); a batch's row locks are released at its commit and its flush
 * (postgres-flush.ts, shared by both) overlaps the next batch; every operation still resolves only
 * once it is durable. Request-log batches are one multi-row INSERT through Kysely.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Engine, EngineOptions, Transact } from '../engine.js';
import { MAX_HOLD_BATCH_SIZE, type HoldOperation } from '../hold-operations.js';
import { migrateToLatest } from '../migrations/migrate.js';
import { PipelinedGroupCommit } from '../pipelined-group-commit.js';
import { appendRequestLog } from '../queries/request-log-queries.js';
import type { Database } from '../schema.js';
import type { RequestLogEntry, StoredResponse } from '../store.js';
import { createDurableFlush } from './postgres-flush.js';
import { createPostgresPipelinedHoldBatchCommit } from './postgres-hold-batch.js';
import { createPostgresResponseBatchCommit, responseSave, type ResponseSave } from './postgres-response-batch.js';

/** PostgreSQL's type id for `int8`/`bigint`. */
const INT8_TYPE_ID = 20;
/** Stored responses are whole answers: fewer per INSERT than hold operations. */
const MAX_RESPONSE_BATCH_SIZE = 64;

export function openPostgresEngine(connectionString: string, options: EngineOptions): Engine {
  const pool = new pg.Pool({
    connectionString,
    // Per pool rather than pg.types.setTypeParser, which would change every pg user in the process.
    types: {
      getTypeParser: ((typeId: number, format?: string) =>
        typeId === INT8_TYPE_ID && format !== 'binary'
          ? (text: string) => BigInt(text)
          : pg.types.getTypeParser(typeId, format === 'binary' ? 'binary' : 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its connection (a server restart, an administrator) is reported
  // here; without a listener Node would treat it as an uncaught error and end the process. The
  // pool has already dropped that client, and the next query opens a new one or fails on its own.
  pool.on('error', () => undefined);
  // A client checked out when its connection drops (between two statements of a transaction)
  // emits on itself, not on the pool; the statement in progress, or the next one, fails and its
  // error reaches the caller, so the event needs only a listener.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const transact: Transact = (work) => db.transaction().execute(work);
  const flush = createDurableFlush(db);
  const holdPipeline = new PipelinedGroupCommit<HoldOperation, boolean>({
    commit: createPostgresPipelinedHoldBatchCommit(db, flush),
    maxBatchSize: MAX_HOLD_BATCH_SIZE,
    onCommit: options.onHoldCommit,
  });
  const responsePipeline = new PipelinedGroupCommit<ResponseSave, void>({
    commit: createPostgresResponseBatchCommit(db, flush),
    maxBatchSize: MAX_RESPONSE_BATCH_SIZE,
  });

  return {
    name: 'postgres',
    db,
    transact,
    holds: holdPipeline,
    migrate: () => migrateToLatest(db, 'postgres'),
    async saveResponse(response: StoredResponse): Promise<void> {
      await responsePipeline.submit(responseSave(response));
    },
    appendRequestLog: (entries: readonly RequestLogEntry[]) => appendRequestLog(db, entries),
    async close(): Promise<void> {
      // What requests queued is written, and flushed, before the connections go.
      await Promise.all([holdPipeline.close(), responsePipeline.close()]);
      await db.destroy();
    },
  };
}
