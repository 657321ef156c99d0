import type { LimitDecision } from './limiter.js';

/** Go-style duration as OpenAI writes it in reset headers: `120ms`, `1s`, `6m0s`. */
export function formatResetDuration(milliseconds: number): string {
  const ms = Math.max(0, Math.ceil(milliseconds));
  if (ms < 1000) return `${ms}ms`;
  const totalSeconds = Math.ceil(ms / 1000);
  const minutes = Math.floor(totalSeconds / 60);
  const seconds = totalSeconds % 60;
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}

/** OpenAI's x-ratelimit-* headers for one kind of limit (`requests` or `tokens`). */
export function rateLimitHeaders(kind: 'requests' | 'tokens', decision: LimitDecision): Record<string, string> {
  return {
    [`x-ratelimit-limit-${kind}`]: String(decision.limit),
    [`x-ratelimit-remaining-${kind}`]: String(decision.remaining),
    [`x-ratelimit-reset-${kind}`]: formatResetDuration(decision.resetMs),
  };
}

/** retry-after (whole seconds, at least 1) and retry-after-ms, read by the official SDKs. */
export function retryAfterHeaders(decision: LimitDecision): Record<string, string> {
  const ms = Math.max(1, Math.ceil(decision.resetMs));
  return { 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))), 'retry-after-ms': String(ms) };
}
