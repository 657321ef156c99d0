/**
 * Tracing as the app sees it: told when a `/v1` request arrives and when its response has ended
 * (its outcome is final then), and, through the router, about each upstream attempt in between.
 * The OpenTelemetry implementation (server/otel-tracer.ts) is loaded only when the `OTEL_*`
 * environment turns tracing on; otherwise there is no tracer, and the app registers no hook for it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AttemptObserver } from '../routing/router.js';

export interface RequestTracer {
  /** A `/v1` request arrived (its route is known, nothing else yet). */
  requestStarted(request: FastifyRequest): void;
  /** Its response has closed, finished or cut; `request.outcome` holds what became of it. */
  requestEnded(request: FastifyRequest, reply: FastifyReply): void;
  /** Each upstream attempt of a request, started and ended by the router. */
  observeAttempt: AttemptObserver;
}
