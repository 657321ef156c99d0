/**
 * The edge: builds the HTTP app from what it is given (no process-level side effects), so tests can
 * build it with real parts on loopback. It owns what every request meets (request id, Host check,
 * body parser, lingering close, the log line) and the one error renderer, and registers the four
 * encapsulated plugins: /v1 (http/v1/), the admin API, the console and ops (/healthz, /metrics).
 */
import '../observability/request-outcome.js';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { ConfigFile } from '../config/schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import { idSuffix } from '../lib/ids.js';
import './v1/api-context.js';
import { registerAdminApi, type AdminApiDeps } from './admin/admin-api.js';
import { registerBodyParser } from './body.js';
import { LINGER_BODY_LIMITS, LINGER_MS, lingerAfterEarlyAnswers, REFUSAL_LINGER_MS } from './lingering-close.js';
import type { Metrics } from '../observability/metrics.js';
import type { RequestLog } from '../request-log/request-log.js';
import { observeApiRequests, type ObserverDeps } from '../observability/observe-requests.js';
import { createClientErrorHandler, createConnectHandler, createExpectationHandler, OpenResponses, type ClientErrorDeps } from './client-errors.js';
import { watchSilentConnections } from './silent-connections.js';
import { toGatewayError } from './errors.js';
import { clientErrorCode, errorBody, errorShapeOf } from '../errors/error-shapes.js';
import { registerConsole, type ConsoleDeps } from './console/console.js';
import { registerOpsRoutes, type OpsDeps } from './ops/ops-routes.js';
import { registerV1Routes, type V1Deps } from './v1/v1-routes.js';

/**
 * What the app is built from: one narrow object per part, each built by the composition root
 * (server/gateway.ts). The edge's own hooks see every request; each plugin sees only its own.
 */
export interface AppDeps {
  edge: EdgeDeps;
  v1: V1Deps;
  admin: AdminApiDeps;
  console: ConsoleDeps;
  ops: OpsDeps;
}

/** What every request meets: the limits, the logger, the answers counter, tracing and the request log. */
export interface EdgeDeps {
  limits: ConfigFile['limits'];
  /** Proxies whose X-Forwarded-For `request.ip` believes; none: the TCP peer's address. */
  trustedProxies: readonly string[];
  logger: Logger;
  metrics: Metrics;
  /** Metrics and traces of each /v1 answer (observability/observe-requests.ts). */
  observe: ObserverDeps;
  /** Records each routed /v1 request (absent with `log.enabled: false`). */
  requestLog?: RequestLog;
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
  const edge = deps.edge;
  const limits = edge.limits;
  // What a client answered before its body has arrived may still send (lingering-close.ts).
  const lingerBytes = LINGER_BODY_LIMITS * limits.max_body_bytes;
  // A parser error on a connection whose response is under way must not write over it.
  const openResponses = new OpenResponses();
  const refusals: ClientErrorDeps = {
    openResponses,
    newRequestId,
    log: edge.logger as FastifyBaseLogger,
    count: (code) => edge.metrics.answers.inc({ route: 'unknown', code }),
    linger: { maxBytes: lingerBytes, maxMs: REFUSAL_LINGER_MS },
  };
  const app = Fastify({
    loggerInstance: edge.logger as FastifyBaseLogger,
    genReqId: newRequestId,
    // One log line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    bodyLimit: limits.max_body_bytes,
    // `request.ip` (the address failed authentications are counted by) believes X-Forwarded-For
    // from these proxies only; with none, it is the TCP peer's. The admin listener's requests go
    // through this app too (admin/admin-listener.ts), and each worker builds its own app.
    trustProxy: edge.trustedProxies.length === 0 ? false : [...edge.trustedProxies],
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
    edge.metrics.answers.inc({ route: request.routeOptions.url ?? 'unknown', code: reply.gatewayErrorCode ?? 'ok' });
    request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'answered');
    done();
  });
  observeApiRequests(app, edge.observe);
  // An upload endpoint's answer lingers in multiples of its own limit.
  const uploadLimits: ReadonlyMap<string, number> = new Map(Object.entries(limits.max_upload_bytes));
  lingerAfterEarlyAnswers(app, { maxBytes: lingerBytes, maxMs: LINGER_MS }, (surface) => {
    const upload = uploadLimits.get(surface);
    return upload === undefined ? lingerBytes : LINGER_BODY_LIMITS * upload;
  });
  registerBodyParser(app);
  edge.requestLog?.register(app);

  app.setErrorHandler((error, request, reply) => {
    const { gatewayError, unexpected } = toGatewayError(error);
    if (unexpected) request.log.error({ err: error }, 'unexpected error');
    else if (gatewayError.status >= 500) request.log.warn({ err: error, code: gatewayError.errorCode }, 'request failed');
    return sendError(reply, gatewayError);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, GatewayError.routeNotFound(request.method, request.url)));

  registerV1Routes(app, deps.v1);
  registerAdminApi(app, deps.admin);
  registerConsole(app, deps.console);
  registerOpsRoutes(app, deps.ops);
  return app;
}
