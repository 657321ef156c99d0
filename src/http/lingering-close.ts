/**
 * An answer sent before the client has sent its whole body must still reach it. The gateway
 * answers early by design: the key check (401, or 429 past the failed-authentication limit) runs
 * before the body is read, so that the spec's check order holds and a stranger's body costs
 * nothing; a body over `limits.max_body_bytes` is refused (413) as soon as it passes the limit; an
 * unknown route (404) never reads its body; the HTTP parser's refusals (client-errors.ts) come
 * mid-request. Closing the socket at once while the client is still sending makes the kernel
 * answer its next bytes with a reset, and a reset can discard our answer from the client's receive
 * buffer before it is read: the client sees EPIPE or ECONNRESET instead of the 413.
 *
 * So such an answer says `Connection: close`, and once it is out the socket is half-closed (our
 * FIN after the answer) but kept reading, what arrives discarded, until the client's body ends (or
 * the client closes its side), or until a bound: LINGER_BODY_LIMITS times the body limit in bytes,
 * or LINGER_MS, whichever comes first. Only then is the socket closed. This is what nginx calls a
 * lingering close (nginx bounds it in time only). The byte bound is a multiple of the body limit
 * because the client of a 413 is by definition sending more than the limit: a body up to four
 * times it still gets its 413 cleanly, and a client sending more is cut off sooner.
 */
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';

/** How long a socket whose answer is out may keep sending before it is cut (nginx's lingering_time). */
export const LINGER_MS = 30_000;

/**
 * The same after an answer to what the HTTP parser refused (client-errors.ts): what follows is no
 * request body worth waiting for, and a client that trickles bytes (a slowloris, given its 408) is
 * not waited for, only given time to read the answer.
 */
export const REFUSAL_LINGER_MS = 1_000;

/** How much a socket whose answer is out may still send, in body limits (`limits.max_body_bytes`). */
export const LINGER_BODY_LIMITS = 4;

export interface LingerBounds {
  /** The most bytes read and discarded after the answer (LINGER_BODY_LIMITS body limits). */
  maxBytes: number;
  /** The longest wait after the answer (LINGER_MS, or REFUSAL_LINGER_MS). */
  maxMs: number;
}

/**
 * Starts reading and discarding what `incoming` (the request still arriving, or the bare socket)
 * brings, and returns the close to call once the answer is out: it half-closes `socket` and
 * closes it once `incoming` has ended (or the client has closed its side), or at once past
 * `bounds.maxBytes` read, or `bounds.maxMs` after the answer. The bytes are counted from this call,
 * so a request must be read through here before Node discards its body unseen (`req._dump()`).
 */
export function lingerThenClose(socket: Socket, incoming: Readable, bounds: LingerBounds): () => void {
  let ended = incoming.readableEnded;
  let answered = false;
  let received = 0;
  let timer: NodeJS.Timeout | undefined;
  const cut = (): void => {
    clearTimeout(timer);
    socket.destroy();
  };
  // Once the answer is out and nothing more is coming: close as Node would have, after the last byte.
  const finish = (): void => {
    clearTimeout(timer);
    Socket.prototype.destroySoon.call(socket);
  };
  const onEnd = (): void => {
    ended = true;
    if (answered) finish();
  };
  incoming.on('data', (chunk: Buffer | string) => {
    received += chunk.length;
    if (received > bounds.maxBytes) cut();
  });
  incoming.once('end', onEnd);
  incoming.once('error', cut);
  // The client closed its side before its body was complete: nothing more is coming either.
  if (incoming !== socket) socket.once('end', onEnd);
  socket.once('close', () => clearTimeout(timer));
  // A body a reader stopped reading mid-way (a multipart upload past its limit, http/v1/upload.ts)
  // is still piped to it, which would pause it again at every chunk: this loop reads it now.
  incoming.unpipe();
  incoming.resume();
  return () => {
    answered = true;
    if (!socket.writableEnded) socket.end();
    if (ended) return finish();
    timer = setTimeout(cut, bounds.maxMs);
    timer.unref();
  };
}

/** Whether the request announces a body (chunked, or a Content-Length above zero). */
function announcesBody(request: IncomingMessage): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

/**
 * Every answer sent while its request's body is still arriving closes the connection with a
 * lingering close: `Connection: close`; the body is read (and discarded) from now on, and the
 * close Node makes once a `Connection: close` answer is out (`socket.destroySoon()`, called from
 * the server's response `finish`) becomes a half-close that waits for the body's end or a bound.
 * The socket is this request's alone from then on (no other request follows on a closing
 * connection), so replacing its close is local.
 */
export function lingerAfterEarlyAnswers(app: FastifyInstance, bounds: LingerBounds, maxBytesOf?: (surface: string) => number): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const incoming = request.raw;
    if (!incoming.complete && announcesBody(incoming)) {
      reply.header('connection', 'close');
      // An upload endpoint (its route's `surface`) bounds what it reads by its own body limit.
      const surface = (request.routeOptions.config as { surface?: unknown } | undefined)?.surface;
      const maxBytes = typeof surface === 'string' && maxBytesOf !== undefined ? maxBytesOf(surface) : bounds.maxBytes;
      incoming.socket.destroySoon = lingerThenClose(incoming.socket, incoming, { ...bounds, maxBytes });
    }
    done(null, payload);
  });
}
