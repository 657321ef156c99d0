/**
 * The one loop of a streamed pass-through, the same for every provider: the upstream body's chunks
 * go through the SSE splitter, each event through the provider's framer, and each frame to the
 * gateway's sink, synchronously, from the body's own `data` events. Nothing per stream but this
 * object, the framer's state and the splitter's (an unfinished line or event, rarely): no iterator
 * or promise per chunk or frame, and no chunk kept once it is read (docs/architecture.md, "Streams").
 */
import { SseSplitter, type EventSplitter, type SseEventHandler } from '../../lib/sse-decoder.js';
import type { FrameSink, PassthroughFrame, PassthroughFrames } from '../provider.js';
import { UnreadableStreamError } from './stream-translator.js';
import { describeStreamFailure } from './transport-failure.js';
import type { UpstreamBody } from './upstream-http.js';

/** A provider's reading of its own stream format: one SSE event in, one frame out. */
export interface PassthroughFramer {
  /**
   * The frame of one upstream event (`text` is the event as the upstream framed it, see
   * `SseEventHandler`), or undefined for none. Throws `UnreadableStreamError` on garbage.
   */
  frame(event: string | undefined, data: string, text: string): PassthroughFrame | undefined;
  /**
   * The body is over before a frame ended the answer: `error` is how it broke (the body's error,
   * or the garbage the framer or the decoder threw), undefined when it ended cleanly. Returns the
   * frame that ends the answer.
   */
  end(error: unknown): PassthroughFrame;
}

/** The text, safe to show the client, of what ended a body early (`PassthroughFramer.end`'s error). */
export function failureText(error: unknown): string {
  return error instanceof UnreadableStreamError ? error.message : describeStreamFailure(error);
}

const ignore = (): void => undefined;

export class PassthroughReader implements PassthroughFrames, SseEventHandler {
  readonly #body: UpstreamBody;
  readonly #framer: PassthroughFramer;
  readonly #splitter: EventSplitter;
  #sink: FrameSink | undefined;
  /** A frame ended the answer, or the body was released: whatever follows is dropped. */
  #over = false;

  /** `splitter` cuts the body into events: SSE by default, or another framing (Bedrock's event stream). */
  constructor(body: UpstreamBody, framer: PassthroughFramer, splitter: EventSplitter = new SseSplitter()) {
    this.#body = body;
    this.#framer = framer;
    this.#splitter = splitter;
  }

  start(sink: FrameSink): void {
    this.#sink = sink;
    const body = this.#body;
    body.on('data', this.#onData);
    body.on('error', this.#onError);
    // `on`, not `once`: each is emitted once, and `once` would wrap each listener per stream.
    body.on('end', this.#onEnd);
    body.on('close', this.#onClose);
  }

  pause(): void {
    this.#body.pause();
  }

  resume(): void {
    this.#body.resume();
  }

  release(): void {
    this.#over = true;
    // Destroying an undici body aborts its request; the error it emits then is expected.
    if (this.#sink === undefined) this.#body.on('error', ignore);
    this.#body.destroy();
  }

  /** One event the splitter completed (called by it, inside `#onData`). */
  sseEvent(event: string | undefined, data: string, text: string): void {
    if (this.#over) return;
    const frame = this.#framer.frame(event, data, text);
    if (frame === undefined) return;
    if (frame.failure !== undefined) {
      // Nothing more of this body is of use: the upstream call stops here.
      this.release();
    } else if (frame.last === true) {
      // The rest is still read (and dropped) so that the connection can be used again.
      this.#over = true;
    }
    this.#sink?.frame(frame);
  }

  readonly #onData = (chunk: Buffer): void => {
    if (this.#over) return;
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
    if (!this.#over) this.#end(new Error('The upstream body closed before it ended.'));
    this.#body.off('data', this.#onData);
    this.#sink?.closed();
  };

  /** The body is over, or unusable: the framer's last frame, unless one ended the answer already. */
  #end(error: unknown): void {
    if (this.#over) return;
    this.#over = true;
    this.#sink?.frame(this.#framer.end(error));
  }
}
