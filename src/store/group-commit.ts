/**
 * Group commit (docs/architecture.md, Money): operations submitted by many requests are written in
 * one database transaction instead of one each. Nothing waits on a timer: when no commit is running
 * the waiting operations are flushed at the end of the current event-loop turn (so everything that
 * turn produced goes together), and while one runs, new operations wait and are flushed the moment
 * it ends. At low load that is one operation per transaction, as before; under load the cost of a
 * transaction is shared by everything that arrived while the previous one was being written.
 *
 * Each operation keeps its own result: the batch's `commit` decides every operation separately
 * (one may fail alone) and resolves only once the transaction has committed, so a caller's promise
 * never resolves for a write that is not durable. When the transaction fails as a whole (the
 * database is away), every operation in it rejects with that error.
 */

/** What the batch decided for one operation. */
export type Outcome<Result> = { ok: true; value: Result } | { ok: false; error: unknown };

export interface GroupCommitOptions<Operation, Result> {
  /**
   * Applies `operations` in one transaction and resolves after it has committed, with one outcome
   * per operation, in order; rejects when the transaction failed (then none of it committed).
   * `underLoad`: the batch is made of operations that waited while the previous one ran (false:
   * it started from an idle queue).
   */
  commit: (operations: readonly Operation[], underLoad: boolean) => Promise<Array<Outcome<Result>>>;
  /** The most operations one transaction takes; the rest wait for the next one. */
  maxBatchSize: number;
  /** Told the size of every batch that committed (metrics, tests); what it throws is ignored. */
  onCommit?: (operations: number) => void;
}

interface Waiting<Operation, Result> {
  operation: Operation;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<Operation, Result> {
  private waiting: Array<Waiting<Operation, Result>> = [];
  private flushing: Promise<void> | undefined;
  private scheduled = false;
  private closed = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(private readonly options: GroupCommitOptions<Operation, Result>) {
    if (!Number.isSafeInteger(options.maxBatchSize) || options.maxBatchSize < 1) {
      throw new RangeError(`maxBatchSize must be a positive integer, got ${options.maxBatchSize}`);
    }
  }

  /** Queues `operation` for the next transaction; resolves with its result once that has committed. */
  submit(operation: Operation): Promise<Result> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise<Result>((resolve, reject) => {
      this.waiting.push({ operation, resolve, reject });
      if (this.flushing === undefined && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush(false);
        });
      }
    });
  }

  /** Refuses new operations and resolves once every queued one has been committed (or has failed). */
  close(): Promise<void> {
    this.closed = true;
    if (this.flushing === undefined && !this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private flush(underLoad: boolean): void {
    if (this.flushing !== undefined) return;
    if (this.waiting.length === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
      return;
    }
    const batch = this.waiting.splice(0, this.options.maxBatchSize);
    this.flushing = this.commit(batch, underLoad).finally(() => {
      this.flushing = undefined;
      // What arrived while this transaction ran goes now, not after another turn.
      this.flush(true);
    });
  }

  private async commit(batch: Array<Waiting<Operation, Result>>, underLoad: boolean): Promise<void> {
    let outcomes: Array<Outcome<Result>>;
    try {
      outcomes = await this.options.commit(batch.map((entry) => entry.operation), underLoad);
      if (outcomes.length !== batch.length) throw new Error(`a group commit returned ${outcomes.length} outcomes for ${batch.length} operations`);
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    batch.forEach((entry, index) => {
      const outcome = outcomes[index] as Outcome<Result>;
      if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
    try {
      this.options.onCommit?.(batch.length);
    } catch {
      // A counter that fails must not stop the queue; the batch is committed either way.
    }
  }
}
