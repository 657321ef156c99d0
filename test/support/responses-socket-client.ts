/**
 * A protocol-level client of the gateway's Responses WebSocket (`GET /v1/responses` upgraded), on
 * the raw `ws` library: it sends any message (malformed ones too), keeps every event the gateway
 * sends in order, and reads them one at a time, turn by turn.
 */
import type { IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';

export type SocketEvent = Record<string, unknown> & { type: string };

/** The events that end a turn: its final response event, or an error. */
const TURN_ENDS: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

export interface ResponsesSocket {
  socket: WebSocket;
  /** The headers of the 101 that opened it. */
  upgradeHeaders: IncomingHttpHeaders;
  /** Every event received so far, in order. */
  events: SocketEvent[];
  /** Sends `message` as JSON text (a string as it is). */
  send(message: unknown): void;
  /** The next event not yet read (waits for it). */
  next(timeoutMs?: number): Promise<SocketEvent>;
  /** Reads events up to and including the next one that ends a turn. */
  untilTurnEnds(timeoutMs?: number): Promise<SocketEvent[]>;
  /** Sends `response.create` with `body`, then reads that turn's events. */
  turn(body: Record<string, unknown>): Promise<SocketEvent[]>;
  /** Resolves with the close code and reason once the socket closed. */
  closed: Promise<{ code: number; reason: string }>;
}

/** The gateway's socket address from its HTTP base address. */
export function socketUrl(baseUrl: string): string {
  return `${baseUrl.replace(/^http/, 'ws')}/v1/responses`;
}

/** Opens a socket with `secret`; rejects when the upgrade is refused. */
export function openResponsesSocket(baseUrl: string, secret: string): Promise<ResponsesSocket> {
  const socket = new WebSocket(socketUrl(baseUrl), { headers: { authorization: `Bearer ${secret}` } });
  const events: SocketEvent[] = [];
  let read = 0;
  let wake: (() => void) | undefined;
  socket.on('message', (data: WebSocket.RawData) => {
    events.push(JSON.parse(String(data)) as SocketEvent);
    wake?.();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString('utf8') });
      wake?.();
    });
  });
  const next = async (timeoutMs = 10_000): Promise<SocketEvent> => {
    const deadline = Date.now() + timeoutMs;
    while (read >= events.length) {
      if (socket.readyState === WebSocket.CLOSED) throw new Error(`socket closed while waiting for an event (read ${read})`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no event in ${timeoutMs} ms (read ${read})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
    return events[read++]!;
  };
  const untilTurnEnds = async (timeoutMs?: number): Promise<SocketEvent[]> => {
    const turn: SocketEvent[] = [];
    for (;;) {
      const event = await next(timeoutMs);
      turn.push(event);
      if (TURN_ENDS.has(event.type)) return turn;
    }
  };
  const send = (message: unknown): void => socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  return new Promise((resolve, reject) => {
    let upgradeHeaders: IncomingHttpHeaders = {};
    socket.once('upgrade', (response) => (upgradeHeaders = response.headers));
    socket.once('unexpected-response', (_request, response) => {
      reject(new Error(`upgrade refused with ${response.statusCode}`));
      socket.terminate();
    });
    // Before the open: the upgrade failed; after it, the close says what happened.
    socket.on('error', reject);
    socket.once('open', () =>
      resolve({
        socket,
        upgradeHeaders,
        events,
        send,
        next,
        untilTurnEnds,
        turn: (body) => {
          send({ type: 'response.create', ...body });
          return untilTurnEnds();
        },
        closed,
      }),
    );
  });
}

/** The visible text of a turn: its text deltas joined. */
export function turnText(events: SocketEvent[]): string {
  return events
    .filter((event) => event.type === 'response.output_text.delta')
    .map((event) => String(event.delta))
    .join('');
}

/** The final response of a turn (its last event's `response`). */
export function finalResponse(events: SocketEvent[]): Record<string, unknown> {
  const last = events.at(-1);
  if (last === undefined || last.type === 'error' || typeof last.response !== 'object') throw new Error(`the turn ended with ${JSON.stringify(last)}`);
  return last.response as Record<string, unknown>;
}
