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
  /** Cost upstreams reported beyond the holds (nano-USD), recorded and not billed. */
  billingExcess: Counter<'model'>;
  /** Usage reports that failed the sanity check (the metered count was billed instead). */
  rejectedUsageReports: Counter<'model'>;
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
  const billingExcess = new Counter({
    name: 'tollgate_billing_excess_nanos_total',
    help: 'Cost upstreams reported beyond the requests\' holds, in nano-USD: recorded in the ledger as excess, not billed.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const rejectedUsageReports = new Counter({
    name: 'tollgate_usage_reports_rejected_total',
    help: 'Upstream usage reports that failed the sanity check; the gateway\'s metered count was billed instead.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  return { registry, answers, limiterFailures: limiterFailureCounter(registry), billingExcess, rejectedUsageReports };
}
