/**
 * Writes request-log rows in batches, off the request path (docs/architecture.md, Request log).
 * `record` only queues: a row waits at most `flushDelayMs` for company, a batch is written at once
 * when `batchRows` wait, and while a write runs the next rows queue up for the write that follows
 * it as soon as it ends (group commit). The queue is bounded: when the database is away, failed
 * batches go back to the front and are retried with backoff, and rows beyond `maxQueuedRows` are
 * dropped and counted, never buffered without end. A crash loses what is queued: log rows only,
 * never a charge (charges are the ledger's, written by the settlement).
 */
import type { RequestLogEntry } from '../store/store.js';

export interface RequestLogWriterOptions {
  /** Appends one batch (one statement). */
  write: (entries: readonly RequestLogEntry[]) => Promise<void>;
  /** Most rows in one write. */
  batchRows?: number;
  /** Most rows waiting; past it new rows are dropped (and counted). */
  maxQueuedRows?: number;
  /** How long a row waits for others before its batch is written. */
  flushDelayMs?: number;
  /** Backoff after a failed write: the first wait, doubled up to the last. */
  retryFirstMs?: number;
  retryMaxMs?: number;
  /** Told how many rows were dropped. */
  onDrop?: (rows: number) => void;
  /** Told of each failed write (the rows are kept for a retry unless the writer is closing). */
  onError?: (error: unknown, rows: number) => void;
  /** Told when a write succeeds again after failures. */
  onRecovered?: () => void;
}

export class RequestLogWriter {
  private queue: RequestLogEntry[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closing = false;
  private readonly batchRows: number;
  private readonly maxQueuedRows: number;
  private readonly flushDelayMs: number;
  private readonly retryFirstMs: number;
  private readonly retryMaxMs: number;

  constructor(private readonly options: RequestLogWriterOptions) {
    this.batchRows = options.batchRows ?? 500;
    this.maxQueuedRows = Math.max(this.batchRows, options.maxQueuedRows ?? 10_000);
    this.flushDelayMs = options.flushDelayMs ?? 100;
    this.retryFirstMs = options.retryFirstMs ?? 500;
    this.retryMaxMs = options.retryMaxMs ?? 30_000;
  }

  /** Rows waiting to be written. */
  get queued(): number {
    return this.queue.length;
  }

  /** Queues one row; never waits and never throws. */
  record(entry: RequestLogEntry): void {
    if (this.queue.length >= this.maxQueuedRows) {
      this.options.onDrop?.(1);
      return;
    }
    this.queue.push(entry);
    // A running write takes the queue next; a backoff waits for its timer.
    if (this.flushing !== undefined || this.failures > 0) return;
    if (this.queue.length >= this.batchRows) this.flush();
    else this.timer ??= unref(setTimeout(() => this.flush(), this.flushDelayMs));
  }

  /** Writes everything queued (each failed batch dropped and counted, no more retries) and resolves when done. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.flushing !== undefined || this.queue.length > 0) {
      if (this.flushing === undefined) this.flush();
      await this.flushing;
    }
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushing !== undefined || this.queue.length === 0) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = undefined;
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.batchRows);
      try {
        await this.options.write(batch);
      } catch (error) {
        this.options.onError?.(error, batch.length);
        if (this.closing) {
          this.options.onDrop?.(batch.length);
          continue;
        }
        this.requeue(batch);
        this.failures += 1;
        const wait = Math.min(this.retryMaxMs, this.retryFirstMs * 2 ** Math.min(this.failures - 1, 20));
        this.timer = unref(setTimeout(() => this.flush(), wait));
        return;
      }
      if (this.failures > 0) {
        this.failures = 0;
        this.options.onRecovered?.();
      }
    }
  }

  /** A failed batch goes back in front of what came since, within the bound (the newest rows give way). */
  private requeue(batch: RequestLogEntry[]): void {
    const merged = batch.concat(this.queue);
    const over = merged.length - this.maxQueuedRows;
    if (over > 0) {
      merged.length = this.maxQueuedRows;
      this.options.onDrop?.(over);
    }
    this.queue = merged;
  }
}

function unref(timer: NodeJS.Timeout): NodeJS.Timeout {
  timer.unref();
  return timer;
}
