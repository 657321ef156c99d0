/**
 * What the two readers of an upstream body share (passthrough-reader.ts for frames, canonical-reader.ts
 * for translated events): the body's own `data` events go through the event splitter, which hands
 * each event it completes to the reader's `sseEvent`, synchronously; nothing per stream but the
 * reader, its splitter's state and the subclass's own, and no iterator or promise per chunk or event
 * (docs/architecture.md, "Streams"). The body is read until it ends, breaks or is released; when it
 * is over before the subclass said the answer ended (`over`), `bodyEnded` says how, once.
 */
import { SseSplitter, type EventSplitter, type SseEventHandler } from '../../lib/sse-decoder.js';
import type { UpstreamBody } from './upstream-http.js';

const ignore = (): void => undefined;

export abstract class BodyEventReader<Sink extends { closed(): void }> implements SseEventHandler {
  protected readonly body: UpstreamBody;
  readonly #splitter: EventSplitter;
  protected sink: Sink | undefined;
  /** The answer ended, or the body was released: whatever follows is dropped. */
  protected over = false;

  /** `splitter` cuts the body into events: SSE by default, or another framing (Bedrock's event stream). */
  constructor(body: UpstreamBody, splitter: EventSplitter = new SseSplitter()) {
    this.body = body;
    this.#splitter = splitter;
  }

  /** Starts reading; what the body carries goes to `sink` until it is over. Called once. */
  start(sink: Sink): void {
    this.sink = sink;
    const body = this.body;
    body.on('data', this.#onData);
    body.on('error', this.#onError);
    // `on`, not `once`: each is emitted once, and `once` would wrap each listener per stream.
    body.on('end', this.#onEnd);
    body.on('close', this.#onClose);
  }

  pause(): void {
    this.body.pause();
  }

  resume(): void {
    this.body.resume();
  }

  /** Stops the upstream call: the rest is dropped unread. Safe at any time, and more than once. */
  release(): void {
    this.over = true;
    // Destroying an undici body aborts its request; the error it emits then is expected.
    if (this.sink === undefined) this.body.on('error', ignore);
    this.body.destroy();
  }

  /** One event the splitter completed (called by it, inside the body's `data` event). */
  abstract sseEvent(event: string | undefined, data: string, text: string): void;

  /**
   * The body is over, or unusable, before the answer ended: `error` is how it broke (the body's
   * error, or the garbage the splitter or the subclass threw), undefined when it ended cleanly.
   * Called at most once, and never after the subclass set `over`.
   */
  protected abstract bodyEnded(error: unknown): void;

  readonly #onData = (chunk: Buffer): void => {
    if (this.over) return;
    try {
      this.#splitter.push(chunk, this);
    } catch (error) {
      // Garbage, or an event past the size limit: the answer ends here.
      this.#end(error);
      this.release();
    }
  };

  readonly #onEnd = (): void => {
    this.#splitter.end();
    this.#end(undefined);
  };

  readonly #onError = (error: unknown): void => {
    this.#end(error);
  };

  readonly #onClose = (): void => {
    // Closed with neither `end` nor `error` (destroyed unread): the connection was lost.
    if (!this.over) this.#end(new Error('The upstream body closed before it ended.'));
    this.body.off('data', this.#onData);
    this.sink?.closed();
  };

  #end(error: unknown): void {
    if (this.over) return;
    this.over = true;
    this.bodyEnded(error);
  }
}
