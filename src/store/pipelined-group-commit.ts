/**
 * Group commit (group-commit.ts) for a database whose commit has two steps that can be told apart:
 * the transaction is applied and committed (its effects visible, its row locks released), and
 * later its commit is durable. PostgreSQL with `synchronous_commit = off` for the transaction,
 * followed by a flush, is one (postgres-hold-batch.ts).
 *
 * The next transaction starts as soon as the previous one has committed, without waiting for the
 * previous flush; each operation's promise still resolves only once its own transaction is
 * durable, so no caller ever acts on a write that a crash could take back. What the split buys is
 * that rows locked by a batch (an account every request of a tenant touches) are held for the
 * time it takes to apply the batch, not for that plus a disk flush, so batches follow each other
 * that much faster and a request waits less for the one before its own.
 */
import { GroupCommit, type Outcome } from './group-commit.js';

/** One transaction, committed: its outcomes, and when its commit is durable. */
export interface CommittedBatch<Result> {
  /** One per operation, in order, as for GroupCommit. */
  outcomes: Array<Outcome<Result>>;
  /** Resolves once the commit is durable; rejects when that cannot be known (then nothing resolves). */
  durable: Promise<void>;
}

export interface PipelinedGroupCommitOptions<Operation, Result> {
  /**
   * Applies and commits `operations` in one transaction; rejects when it failed as a whole.
   * `underLoad` as for GroupCommit: at false nothing waits behind the batch, so it may as well
   * commit durably itself and resolve `durable` at once.
   */
  commit: (operations: readonly Operation[], underLoad: boolean) => Promise<CommittedBatch<Result>>;
  maxBatchSize: number;
  /** Told the size of every batch that committed (metrics, tests). */
  onCommit?: (operations: number) => void;
}

interface Committed<Result> {
  value: Result;
  durable: Promise<void>;
}

export class PipelinedGroupCommit<Operation, Result> {
  private readonly queue: GroupCommit<Operation, Committed<Result>>;
  /** Flushes not yet over, so that close() can wait for them. */
  private readonly flushing = new Set<Promise<void>>();

  constructor(options: PipelinedGroupCommitOptions<Operation, Result>) {
    this.queue = new GroupCommit<Operation, Committed<Result>>({
      maxBatchSize: options.maxBatchSize,
      onCommit: options.onCommit,
      commit: async (operations, underLoad) => {
        const { outcomes, durable } = await options.commit(operations, underLoad);
        this.track(durable);
        return outcomes.map((outcome) => (outcome.ok ? { ok: true, value: { value: outcome.value, durable } } : outcome));
      },
    });
  }

  /** Queues `operation`; resolves with its result once its transaction has committed and is durable. */
  async submit(operation: Operation): Promise<Result> {
    const { value, durable } = await this.queue.submit(operation);
    await durable;
    return value;
  }

  /** Refuses new operations; resolves once every queued one has committed and every flush is over. */
  async close(): Promise<void> {
    await this.queue.close();
    await Promise.allSettled([...this.flushing]);
  }

  private track(durable: Promise<void>): void {
    // Handled here once, so a failed flush is never an unhandled rejection; the operations of the
    // batch see it through their own await.
    const settled = durable.then(
      () => undefined,
      () => undefined,
    );
    this.flushing.add(settled);
    void settled.then(() => this.flushing.delete(settled));
  }
}
