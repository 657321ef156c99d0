/**
 * The one loop of a streamed pass-through, the same for every provider: the upstream body's chunks
 * go through the SSE splitter, each event through the provider's framer, and each frame to the
 * gateway's sink, synchronously, from the body's own `data` events (the loop is body-event-reader.ts,
 * shared with translated answers). Nothing per stream but this object, the framer's state and the
 * splitter's (an unfinished line or event, rarely): no iterator or promise per chunk or frame, and
 * no chunk kept once it is read (docs/architecture.md, "Streams").
 */
import type { EventSplitter } from '../../lib/sse-decoder.js';
import type { FrameSink, PassthroughFrame, PassthroughFrames } from '../provider.js';
import { BodyEventReader } from './body-event-reader.js';
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

export class PassthroughReader extends BodyEventReader<FrameSink> implements PassthroughFrames {
  readonly #framer: PassthroughFramer;

  /** `splitter` cuts the body into events: SSE by default, or another framing (Bedrock's event stream). */
  constructor(body: UpstreamBody, framer: PassthroughFramer, splitter?: EventSplitter) {
    super(body, splitter);
    this.#framer = framer;
  }

  sseEvent(event: string | undefined, data: string, text: string): void {
    if (this.over) return;
    const frame = this.#framer.frame(event, data, text);
    if (frame === undefined) return;
    if (frame.failure !== undefined) {
      // Nothing more of this body is of use: the upstream call stops here.
      this.release();
    } else if (frame.last === true) {
      // The rest is still read (and dropped) so that the connection can be used again.
      this.over = true;
    }
    this.sink?.frame(frame);
  }

  /** The body is over, or unusable, before a frame ended the answer: the framer's last frame. */
  protected bodyEnded(error: unknown): void {
    this.sink?.frame(this.#framer.end(error));
  }
}
