/**
 * `slow_answer`: a model's answer whose first byte came later than `alerts.slow_answer.first_token_ms`
 * or that took longer than `duration_ms` in all, seen as each answer is logged (never delaying it).
 * One alert per slow period of a model: after an alert, further slow answers of that model only
 * extend the period, which ends once `rearm_seconds` pass without one; the next slow answer after
 * that alerts again. Kept per process, like target health, so each instance names itself.
 */
import type { AlertsConfig } from '../config/schema.js';
import type { RequestLogEntry } from '../store/store.js';
import type { Alerts } from './alerts.js';
import { INSTANCE } from './target-events.js';

export type SlowAnswerWatcher = (entry: RequestLogEntry) => void;

/** Undefined when nobody receives `slow_answer` (nothing to watch). */
export function watchSlowAnswers(alerts: Alerts, config: AlertsConfig, now: () => number): SlowAnswerWatcher | undefined {
  const thresholds = config.slow_answer;
  if (thresholds === undefined || !alerts.wants('slow_answer')) return undefined;
  const rearmMs = thresholds.rearm_seconds * 1000;
  /** Per model: when its last slow answer was seen. */
  const lastSlow = new Map<string, number>();
  return (entry) => {
    if (entry.model === null || entry.status >= 400) return;
    const slowStart = thresholds.first_token_ms !== undefined && entry.firstByteMs !== null && entry.firstByteMs > thresholds.first_token_ms;
    const slowWhole = thresholds.duration_ms !== undefined && entry.latencyMs > thresholds.duration_ms;
    if (!slowStart && !slowWhole) return;
    const at = now();
    const previous = lastSlow.get(entry.model);
    lastSlow.set(entry.model, at);
    if (previous !== undefined && at - previous < rearmMs) return;
    alerts.publish('slow_answer', {
      model: entry.model,
      target: entry.target,
      request_id: entry.requestId,
      first_byte_ms: entry.firstByteMs === null ? null : Math.round(entry.firstByteMs),
      duration_ms: Math.round(entry.latencyMs),
      first_token_threshold_ms: thresholds.first_token_ms ?? null,
      duration_threshold_ms: thresholds.duration_ms ?? null,
      instance: INSTANCE,
    });
  };
}
