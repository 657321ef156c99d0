/**
 * Counts answers whose bill is not settled yet, so that a drain (SIGTERM) can wait for every
 * settlement, including those of streams cut at the end of the grace period.
 */
export class InFlight {
  private count = 0;
  private waiters: Array<() => void> = [];

  /** Marks one answer as started; call the returned function once its bill is settled. */
  begin(): () => void {
    this.count += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.count -= 1;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    };
  }

  get size(): number {
    return this.count;
  }

  /** Resolves once nothing is in flight. */
  drained(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
