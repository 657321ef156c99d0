/**
 * Answers for what Node's HTTP server refuses before Fastify routes anything: a request line or
 * header the parser rejects (bad method token, duplicate Content-Length, bad chunking…), headers
 * over `maxHeaderSize` (431), a request not received within the timeouts (408), an `Expect`
 * other than 100-continue (417), and a CONNECT (404, as any unknown method). Node and Fastify would answer these in their own shape or with an
 * empty body; here each is a complete HTTP/1.1 response in the spec's error format, with
 * `x-request-id` and `connection: close`, like every other answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { GatewayError, type GatewayErrorCode } from '../errors/gateway-error.js';
import { lingerThenClose, type LingerBounds } from './lingering-close.js';

export interface ClientErrorDeps {
  newRequestId: () => string;
  log: FastifyBaseLogger;
  /** Counts the answer (route "unknown", the error code), as every other answer is counted. */
  count: (code: GatewayErrorCode) => void;
  /** How long, and how much, a refused client may still send after the answer (lingering-close.ts). */
  linger: LingerBounds;
  /** The responses under way on each connection (absent: none is known). */
  openResponses?: OpenResponses;
}

/** Node's parser error code → the catalogue entry the client gets. */
function errorFor(code: unknown): GatewayErrorCode {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  if (code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  return 'bad_http_request';
}

function bodyOf(error: GatewayError): string {
  return JSON.stringify(error.toBody());
}

/** Sockets already answered: Node may report several parser errors for one connection. */
const answered = new WeakSet<Socket>();

/**
 * The responses of each connection that have not finished, for a parser error on a connection to
 * know whether a response is already on its wire (writing ours would corrupt it), from public API
 * alone. The app adds each request's response in its onRequest hook (the admin listener's requests
 * go through it too) and removes it in its onResponse hook; a response whose onResponse did not run
 * (a client gone) is dropped at the connection's next request, or with the connection.
 */
export class OpenResponses {
  readonly #bySocket = new WeakMap<Socket, ServerResponse[]>();

  add(socket: Socket, response: ServerResponse): void {
    const open = this.#bySocket.get(socket);
    if (open === undefined) {
      this.#bySocket.set(socket, [response]);
      return;
    }
    // A pipelined request, or a connection whose last response ended without its onResponse.
    const unfinished = open.filter((earlier) => !earlier.writableFinished);
    unfinished.push(response);
    this.#bySocket.set(socket, unfinished);
  }

  remove(socket: Socket, response: ServerResponse): void {
    const open = this.#bySocket.get(socket);
    if (open === undefined) return;
    const index = open.indexOf(response);
    if (index !== -1) open.splice(index, 1);
    if (open.length === 0) this.#bySocket.delete(socket);
  }

  /** Whether a response of this connection has its head written and has not finished. */
  started(socket: Socket): boolean {
    return this.#bySocket.get(socket)?.some((response) => response.headersSent && !response.writableFinished) === true;
  }
}

/** Fastify's `clientErrorHandler`: Node's `clientError` event, before any route. */
export function createClientErrorHandler(deps: ClientErrorDeps): (error: Error & { code?: unknown }, socket: Socket) => void {
  return (error, socket) => {
    if (socket.destroyed || error.code === 'ECONNRESET' || error.code === 'EPIPE') {
      socket.destroy();
      return;
    }
    if (answered.has(socket)) return;
    answered.add(socket);
    const gatewayError = new GatewayError(errorFor(error.code));
    const requestId = deps.newRequestId();
    // The code only: the error carries the raw bytes (`rawPacket`), which may hold a key.
    deps.log.info({ requestId, reason: typeof error.code === 'string' ? error.code : 'unknown', status: gatewayError.status }, 'refused before routing');
    deps.count(gatewayError.errorCode);
    if (!socket.writable || deps.openResponses?.started(socket) === true) {
      socket.destroy();
      return;
    }
    writeRawError(socket, gatewayError, requestId, deps.linger);
  };
}

/** A complete HTTP/1.1 answer written on the bare socket, which is then closed (a lingering close). */
function writeRawError(socket: Socket, gatewayError: GatewayError, requestId: string, linger: LingerBounds): void {
  const body = bodyOf(gatewayError);
  const head = [
    `HTTP/1.1 ${gatewayError.status} ${STATUS_CODES[gatewayError.status] ?? ''}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    'connection: close',
  ].join('\r\n');
  socket.end(`${head}\r\n\r\n${body}`);
  lingerThenClose(socket, socket, linger)();
}

/** Node's `connect` event: a CONNECT request (Tollgate is no proxy) gets the spec's 404, not a silent close. */
export function createConnectHandler(deps: ClientErrorDeps): (request: IncomingMessage, socket: Socket) => void {
  return (request, socket) => {
    const error = GatewayError.routeNotFound(request.method ?? 'CONNECT', request.url ?? '');
    const requestId = deps.newRequestId();
    deps.log.info({ requestId, status: error.status }, 'refused before routing');
    deps.count(error.errorCode);
    socket.on('error', () => socket.destroy());
    writeRawError(socket, error, requestId, deps.linger);
  };
}

/** Node's `checkExpectation` event: an `Expect` header other than 100-continue gets the spec's 417. */
export function createExpectationHandler(deps: ClientErrorDeps): (request: IncomingMessage, response: ServerResponse) => void {
  return (_request, response) => {
    const error = new GatewayError('expectation_failed');
    const requestId = deps.newRequestId();
    deps.log.info({ requestId, status: error.status }, 'refused before routing');
    deps.count(error.errorCode);
    const body = bodyOf(error);
    response.writeHead(error.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': requestId,
      connection: 'close',
    });
    response.end(body);
  };
}
