/**
 * One `response.create` on a Responses WebSocket, run as the `POST /v1/responses` request it stands
 * for (docs/wire-protocols.md §22): through the app's own routing, in process (light-my-request,
 * Fastify's injector), so that the turn meets every step an HTTP request meets: the key, the rate
 * limits, the body limit, the hold, the route, the one answer lifecycle and SSE writer, the error
 * catalogue, the request log and the metrics. The socket is a transport; nothing about money or
 * routing is done twice.
 *
 * The turn's event stream is read as it is written, and each event's JSON goes out as one text
 * message. While the socket's buffer is over its mark the turn's stream is not read, which stops
 * the SSE writer (it waits for `drain`), which stops the upstream: memory stays bounded as on
 * HTTP. A socket that closes mid-turn destroys the turn's response, which the answer lifecycle
 * sees as a client gone: the upstream is stopped and what was produced is billed.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { inject } from 'light-my-request';
import { SseSplitter, type SseEventHandler } from '../../../../../lib/sse-decoder.js';

/** What a turn sends its events to (the socket). */
export interface TurnSink {
  /** Sends one message; `sent` is called once it left (or failed). */
  send(text: string, sent: () => void): void;
  /** Bytes queued on the socket and not yet written. */
  readonly buffered: number;
  /** Runs `sends` with the socket corked: the frames they send leave in one write. */
  batch(sends: () => void): void;
}

/** How a turn ended, for the socket's conversation. */
export interface TurnEnd {
  /** The final response object (`response.completed`, `.incomplete` or `.failed`), when one came. */
  response?: Record<string, unknown>;
}

/** Past this many bytes waiting on the socket, the turn's stream is paused until they leave. */
const SOCKET_HIGH_WATER = 1024 * 1024;
/** Headers of the upgrade request each turn carries: the key, and who the client is (for the logs). */
const CARRIED_HEADERS = ['authorization', 'x-api-key', 'user-agent'] as const;
/** The events that end a response; their `response` is the final object. */
const FINAL_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export interface TurnRequest {
  /** The upgrade request's headers (its key). */
  headers: IncomingHttpHeaders;
  /** The client's address, as the upgrade request saw it. */
  remoteAddress: string;
  /** The `POST /v1/responses` body (streamed). */
  body: Record<string, unknown>;
}

/**
 * A running turn. `done` resolves once its answer is over (never rejects); `abandon` ends it early
 * (the socket closed): the upstream is stopped and the answer billed for what was produced.
 */
export class SocketTurn {
  readonly done: Promise<TurnEnd>;
  #response: ServerResponse | undefined;
  #abandoned = false;

  constructor(app: FastifyInstance, request: TurnRequest, sink: TurnSink) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    for (const name of CARRIED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const dispatch = (incoming: unknown, response: ServerResponse): void => {
      // The injected response's socket is a stand-in that drains a turn of the event loop after its
      // 'close' (emitted as soon as the answer ends), so `writableFinished` would still be false
      // there, and every turn would look like a client gone after its end (the request log would
      // record it twice). An answer ended once it was handed over whole; destroyed before, it was not.
      Object.defineProperty(response, 'writableFinished', { get: () => response.writableEnded });
      // Nor does that stand-in's 'drain' reach the response (an HTTP server relays it; there is
      // none), so its `writableNeedDrain` would stay set once raised and stall the SSE writer for
      // good. What the turn holds back is the stream it reads: the writer learns that from what
      // `write` returns, and its 'drain' comes when the turn reads on (sse-writer.ts `ready`).
      Object.defineProperty(response, 'writableNeedDrain', { get: () => false });
      this.#response = response;
      app.routing(incoming as Parameters<FastifyInstance['routing']>[0], response);
    };
    this.done = inject(dispatch, {
      method: 'POST',
      url: '/v1/responses',
      headers,
      payload: JSON.stringify(request.body),
      remoteAddress: request.remoteAddress,
      payloadAsStream: true,
    }).then(
      (answer) => relay(answer.stream(), answer.statusCode, sink),
      // Destroyed before its head was written (the socket closed early): nothing to relay.
      () => ({}),
    );
  }

  /** The socket closed: the answer's client is gone. */
  abandon(): void {
    if (this.#abandoned) return;
    this.#abandoned = true;
    this.#response?.destroy();
  }
}

/** Relays the turn's answer: its events one message each, or an error answer as one `error` event. */
function relay(stream: Readable, status: number, sink: TurnSink): Promise<TurnEnd> {
  return new Promise((resolve) => {
    const end: TurnEnd = {};
    const chunks: Buffer[] = [];
    const streamed = status === 200;
    const splitter = new SseSplitter();
    const events: SseEventHandler = {
      sseEvent(event, data) {
        if (data === '' || data === '[DONE]') return;
        sink.send(data, resume);
        if (event === undefined || FINAL_EVENTS.has(event)) finalResponse(data, end);
        if (sink.buffered > SOCKET_HIGH_WATER) stream.pause();
      },
    };
    const resume = (): void => {
      if (stream.isPaused() && sink.buffered <= SOCKET_HIGH_WATER) stream.resume();
    };
    stream.on('data', (chunk: Buffer) => {
      // The events of one chunk (often several) leave in one write, as the SSE writer's do.
      if (streamed) sink.batch(() => splitter.push(chunk, events));
      else chunks.push(chunk);
    });
    const finish = (): void => {
      if (!streamed) sink.send(errorEvent(status, Buffer.concat(chunks).toString('utf8')), () => undefined);
      resolve(end);
    };
    stream.on('end', finish);
    // Destroyed mid-answer (the socket closed): the lifecycle bills what was produced.
    stream.on('error', () => resolve(end));
  });
}

function finalResponse(data: string, end: TurnEnd): void {
  try {
    const event: unknown = JSON.parse(data);
    if (typeof event !== 'object' || event === null) return;
    const { type, response } = event as { type?: unknown; response?: unknown };
    if (typeof type === 'string' && FINAL_EVENTS.has(type) && typeof response === 'object' && response !== null) end.response = response as Record<string, unknown>;
  } catch {
    // Not JSON: relayed as it came, and not remembered.
  }
}

/**
 * An HTTP error answer as the socket's `error` event: the status beside the error object, as
 * OpenAI's Responses WebSocket sends it (docs/wire-protocols.md §22).
 */
export function errorEvent(status: number, body: string): string {
  let error: unknown;
  try {
    error = (JSON.parse(body) as { error?: unknown }).error;
  } catch {
    error = undefined;
  }
  const told = typeof error === 'object' && error !== null ? error : { type: 'server_error', code: null, message: 'The gateway could not answer this response.', param: null };
  return JSON.stringify({ type: 'error', status, error: told });
}
