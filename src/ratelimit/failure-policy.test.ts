import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CLOSED_RETRY_MS, decisionWithoutBackend, limiterFailureCounter, withFailurePolicy } from './failure-policy.js';
import { createMemoryLimiter } from './memory-limiter.js';

describe('failure policy', () => {
  it('passes the backend decisions through while it works', async () => {
    const errors: unknown[] = [];
    const limiter = withFailurePolicy(createMemoryLimiter(), { onFailure: 'closed', onBackendError: (error) => errors.push(error) });
    expect(await limiter.consume('k', 1, 1, 60)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.consume('k', 1, 1, 60)).toMatchObject({ allowed: false, remaining: 0 });
    expect(errors).toEqual([]);
  });

  it('decides without the backend: open admits within the limit, closed refuses', () => {
    expect(decisionWithoutBackend('open', 1, 10, 60)).toEqual({ allowed: true, limit: 10, remaining: 9, resetMs: 60_000 });
    expect(decisionWithoutBackend('open', 10, 10, 60)).toEqual({ allowed: true, limit: 10, remaining: 0, resetMs: 60_000 });
    expect(decisionWithoutBackend('open', 11, 10, 60)).toEqual({ allowed: false, limit: 10, remaining: 0, resetMs: 60_000 });
    expect(decisionWithoutBackend('closed', 1, 10, 60)).toEqual({ allowed: false, limit: 10, remaining: 0, resetMs: CLOSED_RETRY_MS });
  });

  it('counts failures by policy in a Prometheus counter', async () => {
    const registry = new Registry();
    const counter = limiterFailureCounter(registry);
    counter.inc({ policy: 'open' });
    counter.inc({ policy: 'open' });
    const text = await registry.metrics();
    expect(text).toContain('# TYPE tollgate_rate_limit_backend_failures_total counter');
    expect(text).toContain('tollgate_rate_limit_backend_failures_total{policy="open"} 2');
  });
});
