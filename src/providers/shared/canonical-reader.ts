/**
 * The one loop of a translated answer, the same for every HTTP provider: the upstream body's chunks
 * go through the event splitter, each event through the provider's stream translator, and its
 * canonical events to the sink, synchronously, from the body's own `data` events, as a
 * pass-through's reader does with its frames (passthrough-reader.ts). Nothing per answer but this
 * object, the translator's state and the splitter's: no iterator or promise per chunk or event
 * (docs/architecture.md, "Streams").
 *
 * The answer ends with `finish` or one `error` event: an in-band failure (its text redacted), garbage,
 * or a body that ended or broke before the translator said the answer was whole (unless what came
 * is whole nonetheless, `StreamTranslator.endOfBody`). After `finish` the rest of the body is read
 * and dropped, so that its connection can be used again; after an in-band failure or garbage, it is
 * released.
 */
import { SseSplitter, type EventSplitter, type SseEventHandler } from '../../lib/sse-decoder.js';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import type { CanonicalEvents, EventSink } from '../provider.js';
import { failureText } from './passthrough-reader.js';
import type { StreamTranslator } from './stream-translator.js';
import type { UpstreamBody, UpstreamHttpClient } from './upstream-http.js';

/** The message of the `error` event for a body that ended before the answer was whole. */
export const CUT_SHORT = 'The upstream closed the stream before the answer was complete.';

const ignore = (): void => undefined;

export class CanonicalReader implements CanonicalEvents, SseEventHandler {
  readonly #body: UpstreamBody;
  readonly #translator: StreamTranslator;
  readonly #client: Pick<UpstreamHttpClient, 'safeText'>;
  readonly #splitter: EventSplitter;
  #sink: EventSink | undefined;
  /** The answer ended, or the body was released: whatever follows is dropped. */
  #over = false;

  /**
   * `client` redacts the upstream's failure texts; `splitter` cuts the body into events: SSE by
   * default, or another framing (Bedrock's event stream).
   */
  constructor(body: UpstreamBody, translator: StreamTranslator, client: Pick<UpstreamHttpClient, 'safeText'>, splitter: EventSplitter = new SseSplitter()) {
    this.#body = body;
    this.#translator = translator;
    this.#client = client;
    this.#splitter = splitter;
  }

  start(sink: EventSink): void {
    this.#sink = sink;
    const body = this.#body;
    body.on('data', this.#onData);
    body.on('error', this.#onError);
    // `on`, not `once`: each is emitted once, and `once` would wrap each listener per answer.
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
  sseEvent(event: string | undefined, data: string): void {
    if (this.#over) return;
    const translator = this.#translator;
    const events = translator.translate({ event, data });
    // Past the end of the answer only the connection's tail remains: read, and dropped.
    if (translator.complete) this.#over = true;
    const failed = events.findIndex((canonical) => canonical.type === 'error');
    if (failed !== -1) {
      // Nothing more of this body is of use: the upstream call stops here.
      this.release();
      this.#sink?.events([...events.slice(0, failed), this.#cleaned(events[failed]!)]);
    } else if (events.length > 0) {
      this.#sink?.events(events);
    }
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

  /**
   * The body is over, or unusable, before the translator said the answer was whole: the closing
   * events when what came is whole nonetheless, else the `error` that says how it broke.
   */
  #end(error: unknown): void {
    if (this.#over) return;
    this.#over = true;
    const closing = this.#translator.endOfBody();
    this.#sink?.events(closing ?? [{ type: 'error', code: 'upstream_error', message: error === undefined ? CUT_SHORT : failureText(error) }]);
  }

  /** Upstream error texts go out redacted and cut to length: upstreams echo addresses and keys. */
  #cleaned(event: CanonicalEvent): CanonicalEvent {
    return event.type === 'error' ? { ...event, message: this.#client.safeText(event.message) } : event;
  }
}
