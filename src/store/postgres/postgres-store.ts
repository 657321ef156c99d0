/**
 * The Store on PostgreSQL: KyselyStore's queries, with the request path's writes group-committed
 * and pipelined (pipelined-group-commit.ts). Opens, settles and checkpoints go to
 * `tollgate_apply_hold_operations` (postgres-hold-batch.ts), stored responses to one INSERT per
 * batch (postgres-response-batch.ts); a batch's row locks are released at its commit and its flush
 * (postgres-flush.ts, shared by both) overlaps the next batch; every operation still resolves only
 * once it is durable. Built by open-store.ts.
 */
import { checkpointOperation, MAX_HOLD_BATCH_SIZE, openOperation, settleOperation, type HoldOperation } from '../hold-operations.js';
import { KyselyStore, type KyselyStoreParts } from '../kysely-store.js';
import { PipelinedGroupCommit } from '../pipelined-group-commit.js';
import { createDurableFlush } from './postgres-flush.js';
import { createPostgresPipelinedHoldBatchCommit } from './postgres-hold-batch.js';
import { createPostgresResponseBatchCommit, responseSave, type ResponseSave } from './postgres-response-batch.js';
import type { Charge, HoldCheckpoint, NewHold, StoredResponse } from '../store.js';

/** Stored responses are whole answers: fewer per INSERT than hold operations. */
const MAX_RESPONSE_BATCH_SIZE = 64;

export type PostgresStoreParts = Omit<KyselyStoreParts, 'engine'>;

export class PostgresStore extends KyselyStore {
  private readonly clock: () => Date;
  private readonly holdPipeline: PipelinedGroupCommit<HoldOperation, boolean>;
  private readonly responsePipeline: PipelinedGroupCommit<ResponseSave, void>;

  constructor(parts: PostgresStoreParts) {
    super({ ...parts, engine: 'postgres' });
    this.clock = parts.now;
    const flush = createDurableFlush(parts.db);
    this.holdPipeline = new PipelinedGroupCommit({
      commit: createPostgresPipelinedHoldBatchCommit(parts.db, flush),
      maxBatchSize: MAX_HOLD_BATCH_SIZE,
      onCommit: parts.onHoldCommit,
    });
    this.responsePipeline = new PipelinedGroupCommit({
      commit: createPostgresResponseBatchCommit(parts.db, flush),
      maxBatchSize: MAX_RESPONSE_BATCH_SIZE,
    });
  }

  override async openHold(hold: NewHold): Promise<boolean> {
    return this.holdPipeline.submit(openOperation(hold, this.clock()));
  }

  override async settleHold(holdId: string, charge: Charge | null): Promise<boolean> {
    return this.holdPipeline.submit(settleOperation(holdId, charge, this.clock()));
  }

  override async checkpointHolds(checkpoints: readonly HoldCheckpoint[]): Promise<void> {
    const operation = checkpointOperation(checkpoints);
    if (checkpoints.length > 0) await this.holdPipeline.submit(operation);
  }

  override async saveResponse(response: StoredResponse): Promise<void> {
    await this.responsePipeline.submit(responseSave(response));
  }

  override async close(): Promise<void> {
    // What requests queued is written, and flushed, before the connections go.
    await Promise.all([this.holdPipeline.close(), this.responsePipeline.close()]);
    await super.close();
  }
}
