/**
 * What the metrics and the traces learn from each `/v1` request: its span starts when it arrives,
 * and once it is over its outcome (request-outcome.ts) is recorded and its span ended. "Over" is the
 * response's `close` (which Node emits once for every response, finished or cut by the client;
 * Fastify's onResponse runs only for finished ones) and, for a routed answer, its handler being
 * done with it (the outcome's `ended`: a cut stream is settled a moment after its close).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Catalog } from '../routing/catalog.js';
import type { Metrics } from './metrics.js';
import { RequestMetrics } from './request-metrics.js';
import type { RequestTracer } from './request-tracer.js';

export interface ObserverDeps {
  metrics: Metrics;
  catalog: Catalog;
  tracer?: RequestTracer;
  /** The clock the outcome's `firstByteAt` is taken with. */
  now: () => number;
}

/** The API's routes: what gets a span, and an outcome when it is a routed answer. */
export function isApiRoute(route: string | undefined): boolean {
  return route !== undefined && route.startsWith('/v1/');
}

export function observeApiRequests(app: FastifyInstance, deps: ObserverDeps): void {
  const requestMetrics = new RequestMetrics(deps.metrics, deps.catalog.keys(), (id) => deps.catalog.has(id));
  const tracer = deps.tracer;

  const ended = (request: FastifyRequest, reply: FastifyReply) => {
    const outcome = request.outcome;
    if (outcome !== null) {
      requestMetrics.record(outcome, reply.statusCode, reply.elapsedTime, deps.now());
      // Failures before the router committed to a target are counted as they happen (server/gateway.ts);
      // an upstream failing after it (mid-stream) shows only in the outcome.
      if (outcome.target !== null && outcome.errorCode?.startsWith('upstream_') === true) deps.metrics.upstreamFailures.inc({ target: outcome.target, kind: 'mid_stream' });
    }
    tracer?.requestEnded(request, reply);
  };

  app.addHook('onRequest', (request, reply, done) => {
    if (isApiRoute(request.routeOptions.url)) {
      tracer?.requestStarted(request);
      // `on`: 'close' is emitted once, and `once` would wrap the listener on every response.
      reply.raw.on('close', () => {
        const outcome = request.outcome;
        if (outcome === null) ended(request, reply);
        else void outcome.ended.then(() => ended(request, reply));
      });
    }
    done();
  });
}
