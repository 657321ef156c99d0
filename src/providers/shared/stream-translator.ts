/**
 * What the canonical stream driver needs from a wire format: SSE events in, canonical events out,
 * and a say on whether the upstream finished its answer.
 */
import type { CanonicalEvent } from '../../protocol/canonical.js';
import type { SseEvent } from '../../lib/sse-decoder.js';

export interface StreamTranslator {
  /** True once the upstream has said the answer is whole; whatever follows is drained unread. */
  readonly complete: boolean;
  /**
   * The events one SSE event carries. An upstream in-band failure is an `error` event (message as
   * the upstream wrote it: the driver redacts it). Throws `UnreadableStreamError` on garbage.
   */
  translate(event: SseEvent): CanonicalEvent[];
  /**
   * Called when the body ends (or breaks) before `complete`: the closing events when what arrived
   * is nonetheless a whole answer, undefined when the stream was cut short.
   */
  endOfBody(): CanonicalEvent[] | undefined;
}

/** The upstream sent something that is not its wire format. The message is safe to show. */
export class UnreadableStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableStreamError';
  }
}
