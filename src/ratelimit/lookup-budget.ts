/**
 * How many credential lookups this process may ask the database for per second: the bound on what
 * a flood of made-up credentials costs the database, from however many addresses it comes (each
 * address's own allowance of failures bounds one address, not a crowd). Kept in this process's
 * memory, so each instance (each worker of `serve --workers N`) has its own: it protects the
 * database from this process, and costs no round trip to a shared limit store.
 *
 * Half of each second's budget is open to every request; the other half is kept for clients in
 * good standing (within their allowance of failed authentications), so that one address flooding
 * past its allowance cannot use up the lookups that other clients' new keys need.
 */
export interface LookupBudgetOptions {
  /** Lookups per second; 0 turns the budget off. */
  perSecond: number;
  now: () => number;
}

export class LookupBudget {
  private windowStart = Number.NEGATIVE_INFINITY;
  private used = 0;
  private readonly openShare: number;

  constructor(private readonly options: LookupBudgetOptions) {
    this.openShare = Math.ceil(options.perSecond / 2);
  }

  /**
   * Takes one lookup from this second's budget: from its open half, or, for a client in good
   * standing, from the whole of it. False when none is left for it.
   */
  take(inGoodStanding: boolean): boolean {
    if (this.options.perSecond <= 0) return true;
    const now = this.options.now();
    if (now - this.windowStart >= 1_000) {
      this.windowStart = now;
      this.used = 0;
    }
    if (this.used >= (inGoodStanding ? this.options.perSecond : this.openShare)) return false;
    this.used += 1;
    return true;
  }

  /** Whether this second's whole budget is spent: no lookup for anyone until the next. */
  get spent(): boolean {
    return this.options.perSecond > 0 && this.options.now() - this.windowStart < 1_000 && this.used >= this.options.perSecond;
  }

  /** Milliseconds until the budget starts a new second. */
  get msUntilRefill(): number {
    return Math.max(0, this.windowStart + 1_000 - this.options.now());
  }
}
