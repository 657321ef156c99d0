/**
 * The Store on PostgreSQL: KyselyStore's queries, with the request path's writes pipelined
 * (pipelined-group-commit.ts). Opens, settles and checkpoints go to `tollgate_apply_hold_operations`
 * as on the plain group commit, but a batch's row locks are released at its commit and its flush
 * overlaps the next batch (postgres-hold-batch.ts); every operation still resolves only once it
 * is durable. Built by open-store.ts.
 */
import type { Kysely } from 'kysely';
import { checkpointOperation, MAX_HOLD_BATCH_SIZE, openOperation, settleOperation, type HoldOperation } from './hold-operations.js';
import { KyselyStore, type KyselyStoreParts } from './kysely-store.js';
import { PipelinedGroupCommit } from './pipelined-group-commit.js';
import { createPostgresPipelinedHoldBatchCommit } from './postgres-hold-batch.js';
import type { Database } from './schema.js';
import type { Charge, HoldCheckpoint, NewHold } from './store.js';

export type PostgresStoreParts = Omit<KyselyStoreParts, 'engine'>;

export class PostgresStore extends KyselyStore {
  private readonly clock: () => Date;
  private readonly holdPipeline: PipelinedGroupCommit<HoldOperation, boolean>;

  constructor(parts: PostgresStoreParts & { db: Kysely<Database> }) {
    super({ ...parts, engine: 'postgres' });
    this.clock = parts.now;
    this.holdPipeline = new PipelinedGroupCommit({
      commit: createPostgresPipelinedHoldBatchCommit(parts.db),
      maxBatchSize: MAX_HOLD_BATCH_SIZE,
      onCommit: parts.onHoldCommit,
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

  override async close(): Promise<void> {
    // What requests queued is written, and flushed, before the connections go.
    await this.holdPipeline.close();
    await super.close();
  }
}
