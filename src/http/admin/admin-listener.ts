/**
 * The admin API on a listener of its own (`TOLLGATE_ADMIN_PORT`), so operators can keep it off the
 * public interface. One Fastify app still serves both (same hooks, errors and request ids): the
 * admin listener hands its requests to the app's router and marks them, and a gate refuses each
 * listener's routes on the other as unknown (the spec's 404), so /admin/v1 is not on the public
 * port and /v1 is not on the admin one. The web console (/console) is on both: operators use it on
 * the admin port, key holders on the public one.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { ConfigFile } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';

export const ADMIN_PATH_PREFIX = '/admin/v1';
export const CONSOLE_PATH_PREFIX = '/console';

const fromAdminListener = new WeakSet<IncomingMessage>();

function isUnder(url: string, prefix: string): boolean {
  const path = url.split('?', 1)[0] ?? url;
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** Whether `request` came through the admin listener. */
export function isFromAdminListener(request: IncomingMessage): boolean {
  return fromAdminListener.has(request);
}

/** A root onRequest hook: with a separate admin listener, each listener serves only its own routes. */
export const listenerGate: onRequestAsyncHookHandler = async (request) => {
  if (isUnder(request.url, CONSOLE_PATH_PREFIX)) return;
  if (isUnder(request.url, ADMIN_PATH_PREFIX) !== fromAdminListener.has(request.raw)) throw GatewayError.routeNotFound(request.method, request.url);
};

/** The admin listener's server, with the public one's receive timeouts; `listen` it once the app is ready. */
export function createAdminServer(app: FastifyInstance, limits: ConfigFile['limits']): Server {
  const server = createServer(
    {
      headersTimeout: limits.headers_timeout_ms,
      requestTimeout: limits.request_timeout_ms,
      keepAliveTimeout: limits.keep_alive_timeout_ms,
      connectionsCheckingInterval: limits.connections_check_interval_ms,
      // As on the public port: the app's onRequest hook answers a missing Host in the spec's format.
      requireHostHeader: false,
    },
    (request, response) => {
      fromAdminListener.add(request);
      app.routing(request, response);
    },
  );
  // Parser errors and `Expect` refusals get the same answers in the spec's format as on the public
  // port: the app's server holds those handlers (app.ts), so they are handed over to it.
  server.on('clientError', (error: Error, socket) => app.server.emit('clientError', error, socket));
  server.on('checkExpectation', (request, response) => app.server.emit('checkExpectation', request, response));
  return server;
}
