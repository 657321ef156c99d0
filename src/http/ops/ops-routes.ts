/**
 * What an operator's tooling calls, apart from the admin API: `GET /healthz` for load balancers and
 * `GET /metrics` for Prometheus. An encapsulated plugin built from what these two routes need.
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Metrics } from '../../observability/metrics.js';
import { createAdminAuthentication } from '../admin/auth.js';
import type { SessionAuthDeps } from '../session/session-auth.js';

export interface OpsDeps {
  metrics: Metrics;
  /**
   * What `/metrics` answers: this process's registry by default; under `serve --workers N`, the
   * sum of every worker's, from the cluster primary (server/cluster-metrics.ts).
   */
  scrapeMetrics?: () => Promise<string>;
  /** `metrics.require_admin_token`: `/metrics` is for admin tokens (of any role) only. */
  requireAdminToken: boolean;
  /** How an admin token is checked, when it is required. */
  adminTokens: SessionAuthDeps;
}

export function registerOpsRoutes(app: FastifyInstance, deps: OpsDeps): void {
  void app.register(async (scope) => {
    scope.get('/healthz', async () => ({ status: 'ok' }));
    registerMetricsRoute(scope, deps);
  });
}

/** `GET /metrics`, open or (`metrics.require_admin_token`) for admin tokens of any role. */
function registerMetricsRoute(app: FastifyInstance, deps: OpsDeps): void {
  const scrape = deps.scrapeMetrics ?? (() => deps.metrics.registry.metrics());
  const onRequest = deps.requireAdminToken ? [createAdminAuthentication(deps.adminTokens)] : [];
  app.get('/metrics', { onRequest }, async (request, reply) => {
    let text: string;
    try {
      text = await scrape();
    } catch (error) {
      // Under workers: the primary, or a worker it asked, did not answer in time.
      request.log.warn({ err: error }, 'collecting the metrics failed');
      throw new GatewayError('service_unavailable', { cause: error });
    }
    return reply.header('content-type', deps.metrics.registry.contentType).send(text);
  });
}
