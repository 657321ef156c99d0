/**
 * The one writer of server-sent events, for every surface and route. Frames queued in the same
 * event-loop turn leave in one socket write at the end of the turn (one chunk, one encoding of the
 * text, one syscall), not one write per frame. Backpressure is the caller's: after the frames it
 * queues it asks `ready()`, and reads nothing more of its upstream until that resolves, so the
 * upstream is read no faster than the client takes the answer, and what a stream holds stays
 * bounded (the text of one turn, plus the socket's own buffer).
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/** Past this many characters waiting, they are written at once instead of at the end of the turn. */
const WRITE_AT_CHARACTERS = 64 * 1024;

/**
 * Takes the answer over from Fastify as an event stream: the reply is hijacked and its head (200,
 * `text/event-stream`, the headers set so far: `x-request-id`…) written; the writer sends it with
 * its first frames.
 */
export function openEventStream(reply: FastifyReply, onFirstWrite: () => void): SseWriter {
  reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache');
  reply.hijack();
  const response = reply.raw;
  // Given to writeHead alone, the headers are not kept on the response once they are written.
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
  response.writeHead(200, headers);
  return new SseWriter(response, onFirstWrite);
}

export class SseWriter {
  readonly #response: ServerResponse;
  readonly #onFirstWrite: () => void;
  #pending = '';
  #scheduled = false;
  #wrote = false;
  /** The last write was refused by the response (its buffer full): wait for `drain`. */
  #refused = false;

  /**
   * @param response its head written (`writeHead`: status, content type); it leaves with the first write
   * @param onFirstWrite called once, when the first bytes of the answer go to the socket
   */
  constructor(response: ServerResponse, onFirstWrite: () => void) {
    this.#response = response;
    this.#onFirstWrite = onFirstWrite;
    // The head is handed to the socket now, corked until the first frames: it still leaves with
    // them, in their one write. Node keeps the header block for as long as the response lives (the
    // whole stream), built as a rope of some forty pieces; handed over on its own rather than
    // joined to the first frames, it is that very string that is written, which flattens it: about
    // 750 bytes less per open stream (docs/architecture.md, "Streams").
    response.cork();
    response.flushHeaders();
  }

  /** Whether the answer can still be written (not ended, client still there). */
  get open(): boolean {
    return !this.#response.writableEnded && !this.#response.destroyed;
  }

  /** Queues SSE text for the end of this turn. */
  write(text: string): void {
    if (text === '' || !this.open) return;
    this.#pending += text;
    if (this.#pending.length >= WRITE_AT_CHARACTERS) this.#flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flushLater);
    }
  }

  /**
   * Undefined while the socket takes more; else a promise that resolves once it drained (or the
   * client went away). Await it before producing the next frame.
   */
  ready(): Promise<void> | undefined {
    const response = this.#response;
    // A socket's response says so in `writableNeedDrain`; the response a Responses WebSocket turn
    // is written to (surfaces/responses/socket/) only in what `write` returned.
    if ((!response.writableNeedDrain && !this.#refused) || response.destroyed) return undefined;
    return new Promise((resolve) => {
      const done = (): void => {
        response.off('drain', done);
        response.off('close', done);
        resolve();
      };
      response.on('drain', done);
      response.on('close', done);
    });
  }

  /** Writes what is queued and `text` (the last frames) in one write, and ends the response. */
  end(text = ''): void {
    if (!this.open) return;
    const last = this.#pending + text;
    this.#pending = '';
    if (last !== '') this.#firstWrite();
    this.#response.end(last);
  }

  readonly #drained = (): void => {
    this.#refused = false;
  };

  readonly #flushLater = (): void => {
    this.#scheduled = false;
    this.#flush();
  };

  #flush(): void {
    if (this.#pending === '' || !this.open) return;
    const text = this.#pending;
    this.#pending = '';
    const first = !this.#wrote;
    this.#firstWrite();
    if (!this.#response.write(text) && !this.#refused) {
      this.#refused = true;
      this.#response.once('drain', this.#drained);
    }
    // The head and the first frames go out together (`end` uncorks on its own).
    if (first) this.#response.uncork();
  }

  #firstWrite(): void {
    if (this.#wrote) return;
    this.#wrote = true;
    this.#onFirstWrite();
  }
}
