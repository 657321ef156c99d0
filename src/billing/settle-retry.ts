/**
 * Settlements that failed (the database was away when the answer ended) are tried again with
 * backoff instead of being left for the hold to expire unbilled. Retrying is safe because settling
 * is idempotent: the store settles a hold only while it is open, so an attempt that did commit
 * before its error reached us makes every later attempt a no-op, never a second charge. Past
 * `maxAgeMs` the hold has expired and been released, so there is nothing left to settle: the
 * retrier gives up and logs what went unbilled.
 */
import type { Logger } from 'pino';
import type { Usage } from '../protocol/canonical.js';
import type { Hold } from './billing-service.js';

export interface SettleRetrierOptions {
  /** One attempt; must be idempotent (BillingService.settle is). */
  settle: (hold: Hold, usage: Usage | null) => Promise<unknown>;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Stop once the hold is this old (use the hold TTL): by then it is released and cannot be billed. */
  maxAgeMs: number;
  /** First wait (default 250 ms); each failure doubles it, up to `maxDelayMs` (default 30 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Beyond this many waiting settlements new ones are dropped (logged): memory stays bounded in a long outage. */
  maxPending?: number;
  now?: () => number;
  /** Told of a settlement given up (BillingService.abandoned: a slice's hold is left to its lease). */
  abandoned?: (hold: Hold) => void;
}

export interface SettleRetrier {
  /** Takes over a settlement whose first attempt just failed. `openedAt` (ms since epoch) is when the hold was opened. */
  retry(hold: Hold, usage: Usage | null, openedAt: number): void;
  /** Settlements waiting or being attempted. */
  readonly pending: number;
  /** Stops the timers after one last attempt for each waiting settlement (call before closing the store). */
  close(): Promise<void>;
}

interface Pending {
  hold: Hold;
  usage: Usage | null;
  deadline: number;
  attempts: number;
  timer: NodeJS.Timeout | undefined;
}

export function createSettleRetrier(options: SettleRetrierOptions): SettleRetrier {
  const now = options.now ?? Date.now;
  const initialDelayMs = options.initialDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const maxPending = options.maxPending ?? 10_000;
  const pending = new Map<string, Pending>();
  const attempting = new Set<Promise<void>>();
  let closed = false;

  const summary = (entry: Pending) => ({ holdId: entry.hold.id, accountId: entry.hold.accountId, keyId: entry.hold.keyId, requestId: entry.hold.requestId, model: entry.hold.model, usage: entry.usage, attempts: entry.attempts });

  const giveUp = (entry: Pending, error: unknown, reason: string) => {
    pending.delete(entry.hold.id);
    options.logger.error({ ...summary(entry), err: error }, `settlement abandoned (${reason}); this usage was not billed`);
    options.abandoned?.(entry.hold);
  };

  const attempt = async (entry: Pending): Promise<void> => {
    entry.timer = undefined;
    entry.attempts += 1;
    try {
      await options.settle(entry.hold, entry.usage);
      pending.delete(entry.hold.id);
      options.logger.info(summary(entry), 'settled after retrying');
    } catch (error) {
      if (closed) return giveUp(entry, error, 'shutting down');
      const remaining = entry.deadline - now();
      if (remaining <= 0) return giveUp(entry, error, 'the hold has expired');
      options.logger.warn({ holdId: entry.hold.id, attempts: entry.attempts, err: error }, 'settling the hold failed again; retrying');
      schedule(entry, Math.min(initialDelayMs * 2 ** entry.attempts, maxDelayMs, remaining));
    }
  };

  const run = (entry: Pending) => {
    const running = attempt(entry).finally(() => attempting.delete(running));
    attempting.add(running);
  };

  const schedule = (entry: Pending, delayMs: number) => {
    entry.timer = setTimeout(() => run(entry), delayMs);
    // Waiting settlements must not keep a stopping process alive; close() makes their last attempt.
    entry.timer.unref();
  };

  return {
    retry(hold, usage, openedAt) {
      if (closed || pending.has(hold.id)) return;
      const entry: Pending = { hold, usage, deadline: openedAt + options.maxAgeMs, attempts: 0, timer: undefined };
      if (pending.size >= maxPending) return giveUp(entry, undefined, `${maxPending} settlements already waiting`);
      if (entry.deadline <= now()) return giveUp(entry, undefined, 'the hold has expired');
      pending.set(hold.id, entry);
      schedule(entry, Math.min(initialDelayMs, entry.deadline - now()));
    },

    get pending() {
      return pending.size;
    },

    async close() {
      closed = true;
      for (const entry of pending.values()) {
        if (entry.timer === undefined) continue;
        clearTimeout(entry.timer);
        run(entry);
      }
      while (attempting.size > 0) await Promise.allSettled([...attempting]);
    },
  };
}
