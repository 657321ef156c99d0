/**
 * Builds the HTTP app from what it is given (no process-level side effects), so tests can build it
 * with real parts on loopback. The only place that renders errors and streams.
 */
import '../observability/request-outcome.js';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { BillingService } from '../billing/billing-service.js';
import type { HoldKeeper } from '../billing/hold-keeper.js';
import type { SettleRetrier } from '../billing/settle-retry.js';
import type { ConfigFile } from '../config/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import { idSuffix } from '../lib/ids.js';
import type { Limiter } from '../ratelimit/limiter.js';
import type { Catalog } from '../routing/catalog.js';
import type { Router } from '../routing/router.js';
import type { Store } from '../store/store.js';
import './v1/api-context.js';
import { registerAdminApi } from './admin/admin-api.js';
import { createAdminAuthentication } from './admin/auth.js';
import { AuthGuards } from './auth-guards.js';
import { registerBodyParser } from './body.js';
import { LINGER_BODY_LIMITS, LINGER_MS, lingerAfterEarlyAnswers, REFUSAL_LINGER_MS } from './lingering-close.js';
import type { InFlight } from './v1/in-flight.js';
import type { Metrics } from '../observability/metrics.js';
import type { RequestLog } from '../request-log/request-log.js';
import { observeApiRequests } from '../observability/observe-requests.js';
import type { RequestTracer } from '../observability/request-tracer.js';
import { createClientErrorHandler, createConnectHandler, createExpectationHandler, OpenResponses, type ClientErrorDeps } from './client-errors.js';
import { watchSilentConnections } from './silent-connections.js';
import { toGatewayError } from './errors.js';
import { clientErrorCode, errorBody, errorShapeOf } from '../errors/error-shapes.js';
import { registerConsole } from './console/console.js';
import { registerV1Routes } from './v1/v1-routes.js';

export interface AppDeps {
  config: ConfigFile;
  catalog: Catalog;
  router: Router;
  billing: BillingService;
  holdKeeper: HoldKeeper;
  limiter: Limiter;
  authenticator: Authenticator;
  store: Store;
  inFlight: InFlight;
  settleRetrier: SettleRetrier;
  metrics: Metrics;
  /**
   * What `/metrics` answers: this process's registry by default; under `serve --workers N`, the
   * sum of every worker's, from the cluster primary (server/cluster-metrics.ts).
   */
  scrapeMetrics?: () => Promise<string>;
  /** Present only when tracing is on (observability/request-tracer.ts). */
  tracer?: RequestTracer;
  logger: Logger;
  now: () => number;
  /** The admin API has its own listener (server/gateway.ts): refuse it here and /v1 there. */
  adminListener?: boolean;
  /** Records each routed /v1 request (absent with `log.enabled: false`). */
  requestLog?: RequestLog;
  /** Tells the other instances that keys or accounts changed (Redis), so their caches forget at once. */
  announceKeyChange?: () => Promise<void>;
}

/** Renders `error` in the error shape of the route's surface (see errors/error-shapes.ts). */
export function sendError(reply: FastifyReply, error: GatewayError): FastifyReply {
  const shape = errorShapeOf(reply.request.url, reply.request.headers);
  reply.gatewayErrorCode = error.errorCode;
  reply.clientErrorCode = clientErrorCode(error.errorCode, shape, error.wireCode);
  return reply
    .code(error.status)
    .headers(error.headers)
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(errorBody(error, shape)));
}

/** `req_` + 24 hex digits (lib/ids.ts), on every answer as `x-request-id`. */
const newRequestId = (): string => `req_${idSuffix()}`;

export function buildApp(deps: AppDeps): FastifyInstance {
  const limits = deps.config.limits;
  // What a client answered before its body has arrived may still send (lingering-close.ts).
  const lingerBytes = LINGER_BODY_LIMITS * limits.max_body_bytes;
  // A parser error on a connection whose response is under way must not write over it.
  const openResponses = new OpenResponses();
  const refusals: ClientErrorDeps = {
    openResponses,
    newRequestId,
    log: deps.logger as FastifyBaseLogger,
    count: (code) => deps.metrics.answers.inc({ route: 'unknown', code }),
    linger: { maxBytes: lingerBytes, maxMs: REFUSAL_LINGER_MS },
  };
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId: newRequestId,
    // One log line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    bodyLimit: limits.max_body_bytes,
    // `request.ip` (the address failed authentications are counted by) believes X-Forwarded-For
    // from these proxies only; with none, it is the TCP peer's. The admin listener's requests go
    // through this app too (admin/admin-listener.ts), and each worker builds its own app.
    trustProxy: deps.config.server.trusted_proxies.length === 0 ? false : deps.config.server.trusted_proxies,
    // Slow clients: Node's own receive timeouts, enforced by its connection checker, which bound
    // only the receiving of a request (headers, then the whole body) and never the answer, so a
    // long stream out is not cut. Fastify's `connectionTimeout` (a socket idle timer) is left off:
    // it would also cut a stream whose upstream is silent for a while, which the providers'
    // `idle_ms` already bounds. A refused connection gets a 408 from clientErrorHandler below.
    http: {
      headersTimeout: limits.headers_timeout_ms,
      connectionsCheckingInterval: limits.connections_check_interval_ms,
      // Checked in the onRequest hook below, so that the 400 is in the spec's format.
      requireHostHeader: false,
    },
    requestTimeout: limits.request_timeout_ms,
    keepAliveTimeout: limits.keep_alive_timeout_ms,
    // Errors of Node's HTTP parser (before any route): in the spec's format, see client-errors.ts.
    clientErrorHandler: createClientErrorHandler(refusals),
    // Response ids are opaque; let long ones reach the route (and its 404) instead of a 414.
    routerOptions: { maxParamLength: 1_000 },
    // Errors Fastify raises before routing: a malformed URL is the spec's 404, an over-long path
    // parameter a 414 in the same format, each with the request id like every other answer.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      // A path parameter over maxParamLength: the URI is too long for any route we have.
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') sendError(reply, new GatewayError('uri_too_long'));
      else sendError(reply, GatewayError.routeNotFound(request.method, request.url));
    },
  });
  app.server.on('checkExpectation', createExpectationHandler(refusals));
  app.server.on('connect', createConnectHandler(refusals));
  // On close, a connection that has sent nothing is ended at once (it has no request to drain).
  const endSilentConnections = watchSilentConnections(app.server);
  app.addHook('preClose', (done) => {
    endSilentConnections();
    done();
  });
  app.decorateRequest('apiContext', null);
  app.decorateRequest('outcome', null);
  app.decorateReply('gatewayErrorCode', null);
  app.decorateReply('clientErrorCode', null);
  // These two hooks run on every request and do nothing asynchronous: callback style spares each
  // request a promise and a microtask turn per hook.
  app.addHook('onRequest', (request, reply, done) => {
    openResponses.add(request.raw.socket, reply.raw);
    reply.header('x-request-id', request.id);
    // What Node's requireHostHeader would refuse with an empty 400 (RFC 9112 §3.2). Answered
    // here, so the request goes no further (`done` is not called).
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      sendError(reply.header('connection', 'close'), new GatewayError('missing_host'));
      return;
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    openResponses.remove(request.raw.socket, reply.raw);
    deps.metrics.answers.inc({ route: request.routeOptions.url ?? 'unknown', code: reply.gatewayErrorCode ?? 'ok' });
    request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'answered');
    done();
  });
  observeApiRequests(app, deps);
  lingerAfterEarlyAnswers(app, { maxBytes: lingerBytes, maxMs: LINGER_MS });
  registerBodyParser(app);
  deps.requestLog?.register(app);

  app.setErrorHandler((error, request, reply) => {
    const { gatewayError, unexpected } = toGatewayError(error);
    if (unexpected) request.log.error({ err: error }, 'unexpected error');
    else if (gatewayError.status >= 500) request.log.warn({ err: error, code: gatewayError.errorCode }, 'request failed');
    return sendError(reply, gatewayError);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, GatewayError.routeNotFound(request.method, request.url)));

  const authGuards = new AuthGuards({
    limiter: deps.limiter,
    failuresPerMinute: deps.config.rate_limits.auth_failures_per_minute,
    lookupsPerSecond: deps.config.rate_limits.auth_lookups_per_second,
    now: deps.now,
  });
  registerV1Routes(app, {
    authenticator: deps.authenticator,
    authGuards,
    limiter: deps.limiter,
    rateLimits: deps.config.rate_limits,
    catalog: deps.catalog,
    router: deps.router,
    billing: deps.billing,
    holdKeeper: deps.holdKeeper,
    inFlight: deps.inFlight,
    settleRetrier: deps.settleRetrier,
    metrics: deps.metrics,
    store: deps.store,
    now: deps.now,
  });
  // Claude Code's connectivity probe (`HEAD /api/hello` at the base address); no key is sent.
  app.route({ method: ['GET', 'HEAD'], url: '/api/hello', handler: async (_request, reply) => reply.code(200).send() });
  registerAdminApi(app, {
    store: deps.store,
    authGuards,
    accountsChanged: () => {
      deps.authenticator.invalidate();
      // Without it (or when Redis is away) the other instances notice through the revision poll.
      deps.announceKeyChange?.().catch((error: unknown) => deps.logger.warn({ err: error }, 'announcing a key change through Redis failed'));
    },
    config: deps.config,
    catalog: deps.catalog,
    router: deps.router,
    now: deps.now,
    separateListener: deps.adminListener === true,
  });
  registerConsole(app, {
    store: deps.store,
    authGuards,
    limiter: deps.limiter,
    now: deps.now,
    authenticator: deps.authenticator,
    config: deps.config,
    catalog: deps.catalog,
    router: deps.router,
    separateAdminListener: deps.adminListener === true,
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  registerMetricsRoute(app, deps, authGuards);
  return app;
}

/** `GET /metrics`, open or (`metrics.require_admin_token`) for admin tokens of any role. */
function registerMetricsRoute(app: FastifyInstance, deps: AppDeps, authGuards: AuthGuards): void {
  const scrape = deps.scrapeMetrics ?? (() => deps.metrics.registry.metrics());
  const onRequest = deps.config.metrics.require_admin_token
    ? [createAdminAuthentication({ store: deps.store, authGuards })]
    : [];
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
