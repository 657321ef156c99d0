/**
 * The project's one server-sent-events decoder (docs/architecture.md, "Streams"): bytes in, events
 * out. Framing follows the WHATWG event-stream grammar
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream):
 * CRLF, CR and LF line ends, `data:` lines joined with `\n`, `:` comments, `id:` and `retry:`
 * skipped, a UTF-8 byte order mark at the start dropped.
 *
 * `SseSplitter` is the decoder itself: synchronous, one chunk at a time, with nothing kept between
 * chunks but an unfinished line or event (rare: upstreams end their chunks at event ends). A
 * pass-through and a translated answer read their upstream with it in one loop (a pass-through
 * forwards each event's text as it came, `text` below, instead of writing it anew). `decodeSse`
 * wraps it as an async iterable for the endpoints that relay an upstream's own events.
 */
import { sseFrameOfLines } from '../protocol/sse-frame.js';

/** One dispatched event. `event` is the `event:` field, undefined when the server sent none. */
export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** The stream broke the framing in a way the decoder refuses to carry on from. */
export class SseDecodeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SseDecodeError';
  }
}

export interface DecodeSseOptions {
  /**
   * Most characters one unfinished line or event may hold. A peer that never ends its event would
   * otherwise grow the buffer without bound; past this the decoder throws `SseDecodeError`.
   */
  maxEventLength?: number;
}

/** Receives the events a chunk completes, in order. */
export interface SseEventHandler {
  /**
   * One event. `text` is the event framed as `sseFrameOfLines(event, data)` frames it
   * (protocol/sse-frame.ts): the upstream's own text when it came in that form (the usual case: then
   * forwarding it costs no re-encoding), written anew otherwise (CR line ends, comments, `id:` lines).
   */
  sseEvent(event: string | undefined, data: string, text: string): void;
}

/** 16 Mi characters: far above any real chunk, small enough to stop a runaway upstream. */
const DEFAULT_MAX_EVENT_LENGTH = 16 * 1024 * 1024;

const LF = 10;
const CR = 13;
const SPACE = 32;
const COLON = 58;
const BYTE_ORDER_MARK = 0xfeff;

/**
 * Splits an SSE byte stream into events, synchronously: `push` each chunk as it arrives (chunks may
 * split anywhere, even inside a multi-byte UTF-8 sequence), and the handler receives every event
 * the chunk completes before `push` returns. An event still unfinished when the body ends is
 * dropped, as the SSE grammar requires (a truncated event is not an event).
 */
export class SseSplitter {
  readonly #maxEventLength: number;
  /** The bytes of a line no chunk has ended yet (an exact-size copy, so no chunk is kept alive). */
  #carry: Buffer | undefined;
  #started = false;
  /** The last text ended with a CR: an LF opening the next one belongs to it (CRLF split in two). */
  #afterCr = false;
  // The event being read (its fields so far), when a chunk ends inside it.
  #inEvent = false;
  #event: string | undefined;
  #data = '';
  #dataLines = 0;

  constructor(options: DecodeSseOptions = {}) {
    this.#maxEventLength = options.maxEventLength ?? DEFAULT_MAX_EVENT_LENGTH;
  }

  /** Reads one chunk; throws `SseDecodeError` when an unfinished event outgrows the limit. */
  push(chunk: Uint8Array, handler: SseEventHandler): void {
    let bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.#carry !== undefined) {
      bytes = Buffer.concat([this.#carry, bytes]);
      this.#carry = undefined;
    }
    // Line ends are ASCII, so the text up to the last one never splits a UTF-8 sequence.
    const end = lastLineEnd(bytes) + 1;
    if (end < bytes.length) {
      const rest = Buffer.allocUnsafeSlow(bytes.length - end);
      bytes.copy(rest, 0, end);
      this.#carry = rest;
    }
    if (end > 0) this.#read(bytes.toString('utf8', 0, end), handler);
    if ((this.#carry?.length ?? 0) + this.#data.length > this.#maxEventLength) {
      this.#carry = undefined;
      this.#data = '';
      throw new SseDecodeError('An SSE event exceeded the size limit.');
    }
  }

  /** The body ended: an unfinished line or event is dropped. */
  end(): void {
    this.#carry = undefined;
    this.#reset();
  }

  /** Complete lines (the text ends with a line end). */
  #read(text: string, handler: SseEventHandler): void {
    let position = 0;
    if (!this.#started) {
      this.#started = true;
      if (text.charCodeAt(0) === BYTE_ORDER_MARK) position = 1;
    }
    if (this.#afterCr && text.charCodeAt(position) === LF) position += 1;
    const lfOnly = text.indexOf('\r', position) === -1;
    // Where the current event's text starts in `text`; -1 when it began in an earlier chunk.
    let eventStart = this.#inEvent ? -1 : position;
    // Whether the event so far is written exactly as `sseFrameOfLines` writes it.
    let plain = lfOnly;
    while (position < text.length) {
      let lineEnd: number;
      let next: number;
      if (lfOnly) {
        lineEnd = text.indexOf('\n', position);
        next = lineEnd + 1;
      } else {
        const lf = text.indexOf('\n', position);
        const cr = text.indexOf('\r', position);
        lineEnd = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
        next = lineEnd + (lineEnd === cr && text.charCodeAt(lineEnd + 1) === LF ? 2 : 1);
      }
      if (lineEnd === position) {
        if (this.#dataLines > 0) {
          const data = this.#data;
          const event = this.#event;
          this.#reset();
          handler.sseEvent(event, data, plain && eventStart >= 0 ? text.slice(eventStart, next) : sseFrameOfLines(event, data));
        } else {
          this.#reset();
        }
        eventStart = next;
        plain = lfOnly;
      } else {
        this.#inEvent = true;
        if (!this.#field(text, position, lineEnd, position === eventStart)) plain = false;
      }
      position = next;
    }
    this.#afterCr = text.charCodeAt(text.length - 1) === CR;
  }

  /**
   * One field line (`start` < `end`). Returns whether it is written as `sseFrameOfLines` writes it: a
   * `data: ` line, or an `event: ` line that opens the event.
   */
  #field(text: string, start: number, end: number, opensEvent: boolean): boolean {
    const first = text.charCodeAt(start);
    if (first === COLON) return false; // a comment
    if (text.startsWith('data:', start)) {
      const spaced = text.charCodeAt(start + 5) === SPACE;
      this.#addData(text.slice(start + (spaced ? 6 : 5), end));
      return spaced;
    }
    if (text.startsWith('event:', start)) {
      const spaced = text.charCodeAt(start + 6) === SPACE;
      const value = text.slice(start + (spaced ? 7 : 6), end);
      this.#event = value === '' ? undefined : value;
      return spaced && opensEvent && value !== '';
    }
    // Any other field: `id`, `retry` (neither is forwarded), an unknown one, or a field without a
    // colon (its value is empty).
    const colon = text.indexOf(':', start);
    const nameEnd = colon === -1 || colon > end ? end : colon;
    const name = text.slice(start, nameEnd);
    if (name === 'data' || name === 'event') {
      const valueStart = nameEnd === end ? end : nameEnd + (text.charCodeAt(nameEnd + 1) === SPACE ? 2 : 1);
      const value = text.slice(valueStart, end);
      if (name === 'data') this.#addData(value);
      else this.#event = value === '' ? undefined : value;
    }
    return false;
  }

  #addData(value: string): void {
    this.#data = this.#dataLines === 0 ? value : `${this.#data}\n${value}`;
    this.#dataLines += 1;
  }

  #reset(): void {
    this.#inEvent = false;
    this.#event = undefined;
    this.#data = '';
    this.#dataLines = 0;
  }
}

/** The index of the last CR or LF byte, or -1. */
function lastLineEnd(bytes: Buffer): number {
  const last = bytes.length - 1;
  // The usual chunk ends with the blank line that ends its last event.
  if (bytes[last] === LF || bytes[last] === CR) return last;
  return Math.max(bytes.lastIndexOf(LF), bytes.lastIndexOf(CR));
}

/** What cuts a body's chunks into events, synchronously (`SseSplitter` is one; Bedrock's event-stream splitter another). */
export interface EventSplitter {
  /** Hands the events `chunk` completes to `handler`; throws on garbage. */
  push(chunk: Uint8Array, handler: SseEventHandler): void;
  /** The body ended: what is left unfinished is dropped. */
  end(): void;
}

/**
 * The events `splitter` cuts from a byte stream, in order, as an async iterable. Leaving the iteration early returns the body's iterator, which
 * for a Node stream destroys it.
 */
export async function* splitEvents(splitter: EventSplitter, body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const ready: SseEvent[] = [];
  const handler: SseEventHandler = { sseEvent: (event, data) => void ready.push({ event, data }) };
  for await (const chunk of body) {
    splitter.push(chunk, handler);
    // Hand events out one by one so `for await` backpressure reaches the body.
    for (let event = ready.shift(); event !== undefined; event = ready.shift()) yield event;
  }
  splitter.end();
}

/** An SSE byte stream's events (see `splitEvents`). */
export function decodeSse(body: AsyncIterable<Uint8Array>, options: DecodeSseOptions = {}): AsyncGenerator<SseEvent> {
  return splitEvents(new SseSplitter(options), body);
}
