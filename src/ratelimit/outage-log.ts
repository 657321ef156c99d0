/**
 * Log lines for an outage of the limit store, at a rate an operator can read: one line when it
 * starts (with the reason), then at most one per interval while it lasts (with how many decisions
 * were taken without the store since the last line), and one when the store answers again. Every
 * decision is still counted in the failures metric; only the log is thinned.
 */

/** The part of a pino logger this needs. */
export interface OutageLogger {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

export interface OutageLogOptions {
  logger: OutageLogger;
  /** What limits do meanwhile, for the first line: e.g. "limits are counted per instance, in memory". */
  meanwhile: string;
  /** Least time between two "still unreachable" lines (default one minute). */
  intervalMs?: number;
  now?: () => number;
}

export interface OutageLog {
  /** A decision taken without the store. */
  failed(error: unknown): void;
  /** The store answered a decision again. */
  recovered(): void;
}

export const OUTAGE_MESSAGES = {
  started: 'rate-limit store unreachable',
  ongoing: 'rate-limit store still unreachable',
  ended: 'rate-limit store is back',
} as const;

export function createOutageLog(options: OutageLogOptions): OutageLog {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? 60_000;
  let startedAt: number | undefined;
  let loggedAt = 0;
  let total = 0;
  let sinceLogged = 0;
  return {
    failed(error) {
      const at = now();
      total += 1;
      sinceLogged += 1;
      if (startedAt === undefined) {
        startedAt = at;
        loggedAt = at;
        sinceLogged = 0;
        // The message only: a stack trace says nothing about a network outage.
        options.logger.warn({ reason: reasonOf(error) }, `${OUTAGE_MESSAGES.started}; ${options.meanwhile} until it is back`);
        return;
      }
      if (at - loggedAt < intervalMs) return;
      options.logger.warn({ reason: reasonOf(error), decisions: sinceLogged, outageSeconds: Math.round((at - startedAt) / 1000) }, OUTAGE_MESSAGES.ongoing);
      loggedAt = at;
      sinceLogged = 0;
    },
    recovered() {
      if (startedAt === undefined) return;
      options.logger.info({ decisions: total, outageSeconds: Math.round((now() - startedAt) / 1000) }, OUTAGE_MESSAGES.ended);
      startedAt = undefined;
      total = 0;
      sinceLogged = 0;
    },
  };
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
