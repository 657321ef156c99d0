/**
 * One timer for every running request's hold, instead of one per request. Each tick writes, in one
 * transaction, the usage metered so far by the requests whose count moved (so that a crash loses at
 * most one interval of billable output, and once the upstream accepted a request and its input is
 * counted, that input: the expired hold settles its last checkpoint) and pushes
 * the expiry of holds that need it (so that a stream outliving the hold TTL is still billed). A hold
 * admitted from a quota slice has no row: its first checkpoint, whatever its usage, moves it out of
 * its slice into an open row (docs/architecture.md, Money: "Quota slices"), so from then on a crash
 * bills it by the expiry path like any hold. The timer runs only while some request does.
 */
import type { Usage } from '../protocol/canonical.js';
import type { HoldCheckpoint, MoneyStore } from '../store/store.js';
import { sliceHoldOf, type BillingService, type Hold } from './billing-service.js';

export interface HoldKeeperOptions {
  store: Pick<MoneyStore, 'checkpointHolds'>;
  billing: Pick<BillingService, 'cappedCost' | 'expiryFromNow'>;
  /** Time between two checkpoints (the most billable output a crash can lose). */
  intervalMs: number;
  /** Holds are extended once this much of their TTL has passed (a third of it). */
  extendAfterMs: number;
  now: () => number;
  onError: (error: unknown) => void;
  /** A running request's meter threw (a bug of that request): its hold is skipped this time. */
  onMeterError: (error: unknown, hold: Hold) => void;
  /** A hold admitted from a slice has a row now (its checkpoint committed): BillingService.converted. */
  converted?: (hold: Hold) => void;
}

interface Running {
  hold: Hold;
  metered: () => Usage;
  checkpointedNanos: bigint;
  checkpointedInput: number;
  checkpointedOutput: number;
  extendedAt: number;
  /** A hold admitted from a slice whose checkpoint has committed (it has a row now). */
  converted: boolean;
}

export class HoldKeeper {
  private readonly running = new Map<string, Running>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;

  constructor(private readonly options: HoldKeeperOptions) {}

  /**
   * Keeps `hold` alive and checkpointed while its request runs; returns the function that stops it.
   * `metered` is asked once per tick (UsageMeter.checkpoint).
   */
  track(hold: Hold, metered: () => Usage): () => void {
    this.running.set(hold.id, { hold, metered, checkpointedNanos: 0n, checkpointedInput: 0, checkpointedOutput: 0, extendedAt: this.options.now(), converted: hold.slice === undefined });
    this.timer ??= this.startTimer();
    return () => {
      this.running.delete(hold.id);
      if (this.running.size === 0) this.stopTimer();
    };
  }

  /** Holds tracked now. */
  get size(): number {
    return this.running.size;
  }

  /** Writes the checkpoints that are due now (the timer calls it; tests may too). */
  async checkpoint(): Promise<void> {
    if (this.writing !== undefined) return this.writing;
    const { due, converting } = this.collect();
    if (due.length === 0) return;
    this.writing = this.options.store
      .checkpointHolds(due)
      .then(() => {
        for (const entry of converting) {
          entry.converted = true;
          this.options.converted?.(entry.hold);
        }
      })
      .catch(this.options.onError)
      .finally(() => (this.writing = undefined));
    return this.writing;
  }

  private collect(): { due: HoldCheckpoint[]; converting: Running[] } {
    const now = this.options.now();
    const due: HoldCheckpoint[] = [];
    const converting: Running[] = [];
    for (const entry of this.running.values()) {
      const usage = this.meteredOf(entry);
      if (usage === undefined) continue;
      // Not yet a row: due at once, whatever it metered.
      const slice = entry.converted ? undefined : sliceHoldOf(entry.hold);
      const extend = slice !== undefined || now - entry.extendedAt >= this.options.extendAfterMs;
      if (!extend && usage.outputTokens === entry.checkpointedOutput && usage.inputTokens === entry.checkpointedInput) continue;
      const costNanos = this.options.billing.cappedCost(entry.hold, usage);
      if (!extend && costNanos === entry.checkpointedNanos) continue;
      entry.checkpointedNanos = costNanos;
      entry.checkpointedInput = usage.inputTokens;
      entry.checkpointedOutput = usage.outputTokens;
      entry.extendedAt = now;
      due.push({ holdId: entry.hold.id, expiresAt: this.options.billing.expiryFromNow(), costNanos, tokens: usage, ...(slice === undefined ? {} : { slice }) });
      if (slice !== undefined) converting.push(entry);
    }
    return { due, converting };
  }

  /**
   * What `entry`'s request metered so far; undefined when its meter threw: the other holds are
   * still checkpointed, and no rejection escapes the timer.
   */
  private meteredOf(entry: Running): Usage | undefined {
    try {
      return entry.metered();
    } catch (error) {
      this.options.onMeterError(error, entry.hold);
      return undefined;
    }
  }

  private startTimer(): NodeJS.Timeout {
    const timer = setInterval(() => void this.checkpoint(), this.options.intervalMs);
    // A process that is stopping must not be kept alive by it; a crash stops it anyway.
    timer.unref();
    return timer;
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
