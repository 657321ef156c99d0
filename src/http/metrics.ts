/**
 * Prometheus metrics (prom-client), one registry per process: answers by route and error code
 * (the closed GatewayError code set is the label), and decisions taken without the limit store.
 */
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { limiterFailureCounter } from '../ratelimit/failure-policy.js';

export interface Metrics {
  registry: Registry;
  answers: Counter<'route' | 'code'>;
  limiterFailures: Counter<'policy'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const answers = new Counter({
    name: 'tollgate_answers_total',
    help: 'Answers by route and outcome (ok, or the gateway error code).',
    labelNames: ['route', 'code'] as const,
    registers: [registry],
  });
  return { registry, answers, limiterFailures: limiterFailureCounter(registry) };
}
