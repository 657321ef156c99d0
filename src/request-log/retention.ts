/**
 * Prunes request-log rows older than `log.retention_days` in the background: small deletes with a
 * pause between them, so that neither the database nor this process is held for long however
 * much has expired. Several instances may prune at once; they only share the work.
 */
import type { OperationsStore } from '../store/store.js';

const DAY_MILLISECONDS = 86_400_000;

export interface RetentionOptions {
  store: Pick<OperationsStore, 'pruneRequestLog'>;
  retentionDays: number;
  now: () => number;
  /** Rows per delete. */
  batchRows?: number;
  /** Pause between two deletes. */
  pauseMs?: number;
}

export class RequestLogRetention {
  private stopped = false;
  private wake: (() => void) | undefined;
  private running: Promise<number> | undefined;

  constructor(private readonly options: RetentionOptions) {}

  /** Deletes every expired row, a batch at a time; resolves with how many. One pass at a time. */
  pruneExpired(): Promise<number> {
    this.running ??= this.prune().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Ends a running pass at its next pause. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running?.catch(() => undefined);
  }

  private async prune(): Promise<number> {
    const batchRows = this.options.batchRows ?? 1_000;
    const before = new Date(this.options.now() - this.options.retentionDays * DAY_MILLISECONDS);
    let total = 0;
    while (!this.stopped) {
      const deleted = await this.options.store.pruneRequestLog(before, batchRows);
      total += deleted;
      if (deleted < batchRows) break;
      await this.pause(this.options.pauseMs ?? 50);
    }
    return total;
  }

  private pause(milliseconds: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, milliseconds);
      timer.unref();
      this.wake = done;
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}
