/**
 * One limiter interface for every backend. Each limit is a fixed window of `limit` points per
 * `windowSeconds`, counted per subject (a key id, a client address).
 *
 * A process on its own counts in its memory (`createFlexibleLimiter` over rate-limiter-flexible,
 * cached per (limit, window) pair so per-key overrides share a backend). Processes that share a
 * window (the workers of `serve --workers N` through their primary, instances through Redis) lease
 * points of it instead of asking it per request (`createLeaseLimiter`): see docs/architecture.md,
 * "Rate limits across processes", for the rule and its tolerances.
 */
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface Limiter {
  /**
   * Takes `points` from `subject`'s window of `limit` per `windowSeconds`. Never throws for a
   * denial. With 0 points it only reads the window (`remaining`).
   */
  consume(subject: string, points: number, limit: number, windowSeconds: number): Promise<LimitDecision>;
  close(): Promise<void>;
}

export type LimiterFactory = (options: { points: number; duration: number; keyPrefix: string }) => RateLimiterAbstract;

export function createFlexibleLimiter(factory: LimiterFactory, onClose: () => Promise<void> = async () => {}): Limiter {
  const limiters = new Map<string, RateLimiterAbstract>();
  const limiterFor = (limit: number, windowSeconds: number): RateLimiterAbstract => {
    const name = `${limit}/${windowSeconds}`;
    let limiter = limiters.get(name);
    if (limiter === undefined) {
      limiter = factory({ points: limit, duration: windowSeconds, keyPrefix: `tollgate:rl:${name}` });
      limiters.set(name, limiter);
    }
    return limiter;
  };
  return {
    async consume(subject, points, limit, windowSeconds) {
      try {
        const result = await limiterFor(limit, windowSeconds).consume(subject, points);
        return { allowed: true, limit, remaining: Math.max(0, result.remainingPoints), resetMs: result.msBeforeNext };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          // A refused request must not use up the window: give its points back.
          await limiterFor(limit, windowSeconds)
            .reward(subject, points)
            .catch(() => undefined);
          return { allowed: false, limit, remaining: 0, resetMs: Math.max(0, rejection.msBeforeNext) };
        }
        throw rejection;
      }
    },
    close: onClose,
  };
}

/** What a process asks of a shared window. */
export interface TakeRequest {
  /** Fewer points than this are no use to the asker: then it gets none. 0 only reads the window. */
  least: number;
  /** Points the waiting requests need (granted in full when the window has them, else what it has). */
  need: number;
  /** Points the asker would like to keep for its next requests (granted only within `grantFrom`'s bounds). */
  spare: number;
  limit: number;
  windowMs: number;
}

export interface WindowAnswer {
  /** Points taken from the window for the asker. */
  granted: number;
  /** Points the window has left after this grant. */
  left: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
  /** Which window: a new one starts when it ends, and points go back only to the window they came from. */
  window: string;
}

/** A window shared by several processes: the cluster primary's memory, or Redis. Each call is atomic. */
export interface WindowStore {
  take(key: string, request: TakeRequest): Promise<WindowAnswer>;
  /** Gives unspent `points` back to `window` of `key`; nothing when that window has ended. */
  give(key: string, points: number, window: string): Promise<void>;
  close(): Promise<void>;
}

/** How leases are sized and when their unspent points go back (docs/architecture.md, "Rate limits across processes"). */
export const LEASE = {
  /** Spare points are at most what this process was asked for on the subject in this span... */
  demandMs: 500,
  /** ...at most this fraction of the limit (so a limit under 64 is never leased ahead)... */
  limitShare: 64,
  /** ...and at most this fraction of what the window has left beyond the need. */
  restShare: 4,
  /** Unspent points go back after this long without a request... */
  idleMs: 500,
  /** ...or this long after they were granted, so a renewal rereads the window at least this often. */
  maxAgeMs: 1_000,
  /** How often idle and old leases are looked for. */
  sweepMs: 250,
} as const;

/**
 * The grant rule, applied atomically by every store (redis-limiter.ts holds it again in Lua): none
 * when fewer than `least` points are left; else the need (or what is left of it), and spare points
 * only out of a quarter of what is left beyond the need, so that near the limit nothing is leased
 * ahead and every request is decided by the store itself.
 */
export function grantFrom(left: number, request: Pick<TakeRequest, 'least' | 'need' | 'spare'>): number {
  if (left < request.least) return 0;
  const needed = Math.min(left, request.need);
  return needed + Math.min(request.spare, Math.floor((left - needed) / LEASE.restShare));
}

interface Waiter {
  points: number;
  /** Whether it was already put back once after its window ended under its take. */
  retried: boolean;
  resolve(decision: LimitDecision): void;
  reject(error: unknown): void;
}

/** One subject's lease in this process: granted points not spent yet, and the requests waiting for more. */
class Lease {
  points = 0;
  /** What the window had left beyond every lease at the last answer. */
  left = 0;
  /** When the window ends, by this process's clock (never later than the store's end). */
  endsAt = 0;
  window = '';
  grantedAt = 0;
  usedAt = 0;
  taking = false;
  readonly waiting: Waiter[] = [];
  private bucketStart = 0;
  private current = 0;
  private previous = 0;

  /** Points asked for in about the last `LEASE.demandMs`: the current span and a share of the one before. */
  demand(now: number): number {
    this.roll(now);
    const weight = 1 - (now - this.bucketStart) / LEASE.demandMs;
    return this.current + Math.floor(this.previous * weight);
  }

  asked(points: number, now: number): void {
    this.roll(now);
    this.current += points;
  }

  /** Forgets points of a window that has ended: the store no longer counts them either. */
  expire(now: number): void {
    if (this.endsAt <= now) this.points = 0;
  }

  spend(points: number, limit: number, now: number): LimitDecision {
    this.points -= points;
    this.usedAt = now;
    return { allowed: true, limit, remaining: this.left + this.points, resetMs: Math.max(0, this.endsAt - now) };
  }

  private roll(now: number): void {
    const elapsed = now - this.bucketStart;
    if (elapsed < LEASE.demandMs) return;
    this.previous = elapsed < 2 * LEASE.demandMs ? this.current : 0;
    this.current = 0;
    this.bucketStart = elapsed < 2 * LEASE.demandMs ? this.bucketStart + LEASE.demandMs : now;
  }
}

/**
 * A limiter that spends leased points of a shared window in this process. A request the lease
 * covers is decided here; the others wait for one take from the store (one at a time per subject,
 * so requests that arrive meanwhile share the next one), which grants what they need plus spare
 * points sized by recent demand. The store's errors reach the caller (one rejection per request),
 * whose failure policy decides; every lease is dropped then, and taken afresh once the store answers.
 */
export function createLeaseLimiter(store: WindowStore): Limiter {
  const leases = new Map<string, Lease>();
  const giving = new Set<Promise<void>>();
  let sweeper: NodeJS.Timeout | undefined;

  const giveBack = (key: string, lease: Lease): void => {
    const points = lease.points;
    if (points <= 0) return;
    lease.points = 0;
    // A give that fails leaves the points counted until the window ends: the limit is lowered, never raised.
    const given = store.give(key, points, lease.window).catch(() => undefined);
    giving.add(given);
    void given.finally(() => giving.delete(given));
  };

  const sweep = (): void => {
    const now = Date.now();
    for (const [key, lease] of leases) {
      if (lease.taking) continue;
      lease.expire(now);
      if (lease.points === 0 && now - lease.usedAt >= LEASE.maxAgeMs) leases.delete(key);
      else if (lease.points > 0 && (now - lease.usedAt >= LEASE.idleMs || now - lease.grantedAt >= LEASE.maxAgeMs)) giveBack(key, lease);
    }
    if (leases.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  const leaseFor = (key: string): Lease => {
    let lease = leases.get(key);
    if (lease === undefined) {
      lease = new Lease();
      leases.set(key, lease);
      sweeper ??= setInterval(sweep, LEASE.sweepMs).unref();
    }
    return lease;
  };

  /** Serves the waiting requests the lease covers now, in order; true when none is left waiting. */
  const serveWaiting = (lease: Lease, limit: number): boolean => {
    const now = Date.now();
    lease.expire(now);
    for (let index = 0; index < lease.waiting.length; ) {
      const waiter = lease.waiting[index]!;
      if (waiter.points > lease.points) index += 1;
      else {
        lease.waiting.splice(index, 1);
        waiter.resolve(lease.spend(waiter.points, limit, now));
      }
    }
    return lease.waiting.length === 0;
  };

  /** Takes from the store for the waiting requests until none is left waiting. */
  const renew = async (key: string, lease: Lease, limit: number, windowMs: number): Promise<void> => {
    lease.taking = true;
    try {
      while (!serveWaiting(lease, limit)) {
        const batch = lease.waiting.splice(0);
        // What the lease holds goes to this batch: requests arriving meanwhile wait for the answer.
        const held = lease.points;
        lease.points = 0;
        const sentAt = Date.now();
        const total = batch.reduce((sum, waiter) => sum + waiter.points, 0);
        const request: TakeRequest = {
          least: batch.reduce((least, waiter) => Math.min(least, waiter.points), total) - held,
          need: total - held,
          spare: Math.min(Math.max(0, lease.demand(sentAt) - total), Math.floor(limit / LEASE.limitShare)),
          limit,
          windowMs,
        };
        let answer: WindowAnswer;
        try {
          answer = await store.take(key, request);
        } catch (error) {
          // Every request waiting on this subject fails with it, at once, rather than one store
          // timeout each. Every lease is dropped (its points stay counted by the store until their
          // window ends): no decision is taken here again before the store has answered one, so
          // the first decision after an outage is the store's, and reports it back.
          for (const other of leases.values()) {
            other.points = 0;
            other.window = '';
          }
          for (const waiter of [...batch, ...lease.waiting.splice(0)]) waiter.reject(error);
          return;
        }
        const now = Date.now();
        // Points of a window that ended under the take are void: the store has forgotten them.
        const voided = answer.window === lease.window ? 0 : held;
        lease.points = held - voided + answer.granted;
        lease.left = answer.left;
        lease.window = answer.window;
        lease.endsAt = sentAt + answer.resetMs;
        lease.grantedAt = lease.usedAt = now;
        const refused: Waiter[] = [];
        for (const waiter of batch) {
          if (waiter.points <= lease.points) waiter.resolve(lease.spend(waiter.points, limit, now));
          else refused.push(waiter);
        }
        if (refused.length === 0) continue;
        if (voided > 0 && refused.some((waiter) => !waiter.retried)) {
          // Counted on the ended window's points: ask the new window for them once more.
          for (const waiter of refused) waiter.retried = true;
          lease.waiting.unshift(...refused);
          continue;
        }
        for (const waiter of refused) waiter.resolve({ allowed: false, limit, remaining: 0, resetMs: Math.max(0, answer.resetMs) });
        // The window is nearly spent: what this process holds goes back for the others.
        giveBack(key, lease);
      }
    } finally {
      lease.taking = false;
    }
  };

  return {
    async consume(subject, points, limit, windowSeconds) {
      const key = `${limit}/${windowSeconds}:${subject}`;
      const windowMs = windowSeconds * 1_000;
      const lease = leaseFor(key);
      const now = Date.now();
      lease.expire(now);
      if (points <= 0) {
        const answer = await store.take(key, { least: 0, need: 0, spare: 0, limit, windowMs });
        const mine = answer.window === lease.window && lease.endsAt > Date.now() ? lease.points : 0;
        return { allowed: true, limit, remaining: answer.left + mine, resetMs: Math.max(0, answer.resetMs) };
      }
      lease.asked(points, now);
      if (!lease.taking && points <= lease.points) return lease.spend(points, limit, now);
      const decision = new Promise<LimitDecision>((resolve, reject) => lease.waiting.push({ points, retried: false, resolve, reject }));
      if (!lease.taking) void renew(key, lease, limit, windowMs);
      return decision;
    },
    async close() {
      clearInterval(sweeper);
      sweeper = undefined;
      for (const [key, lease] of leases) giveBack(key, lease);
      await Promise.all(giving);
      await store.close();
    },
  };
}
