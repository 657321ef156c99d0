/**
 * `GET /v1/responses` upgraded to a WebSocket (docs/wire-protocols.md §22), as OpenAI serves it and
 * Codex opens it first: the upgrade request meets the API hooks (key, then request rate limit), so a
 * bad key is refused with the usual 401 before any socket exists; then each `response.create` is a
 * turn of the session (socket-session.ts). A GET that asks no upgrade is an unknown route, as before.
 * Built on @fastify/websocket (the `ws` library); messages above `max_body_bytes` close the socket.
 */
import fastifyWebsocket from '@fastify/websocket';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { GatewayError } from '../../../../../errors/gateway-error.js';
import { SocketSession } from './socket-session.js';

export interface ResponsesSocketDeps {
  onRequest: onRequestAsyncHookHandler[];
  /** The largest message, as the largest POST body (`limits.max_body_bytes`). */
  maxMessageBytes: number;
  /** `limits.socket_idle_ms`. */
  idleMs: number;
  now: () => number;
}

/** The upgrade request's id, for the 101's `x-request-id` (the `ws` library writes that head). */
const requestIds = new WeakMap<object, string>();

export async function registerResponsesSocket(scope: FastifyInstance, deps: ResponsesSocketDeps): Promise<void> {
  await scope.register(fastifyWebsocket, { options: { maxPayload: deps.maxMessageBytes, perMessageDeflate: false } });
  scope.websocketServer.on('headers', (headers: string[], request: object) => {
    const id = requestIds.get(request);
    if (id !== undefined) headers.push(`x-request-id: ${id}`);
  });
  scope.route({
    method: 'GET',
    url: '/v1/responses',
    onRequest: deps.onRequest,
    handler: async (request) => {
      throw GatewayError.routeNotFound(request.method, request.url);
    },
    wsHandler: (socket, request) => {
      new SocketSession(socket, request, { app: scope, idleMs: deps.idleMs, now: deps.now });
    },
    preHandler: (request, _reply, done) => {
      requestIds.set(request.raw, request.id);
      done();
    },
  });
}
