/**
 * The one loop of a translated answer, the same for every HTTP provider: the upstream body's chunks
 * go through the event splitter, each event through the provider's stream translator, and its
 * canonical events to the sink, synchronously, from the body's own `data` events, in the loop a
 * pass-through's reader uses for its frames (body-event-reader.ts, passthrough-reader.ts). Nothing per answer but this
 * object, the translator's state and the splitter's: no iterator or promise per chunk or event
 * (docs/architecture.md, "Streams").
 *
 * The answer ends with `finish` or one `error` event: an in-band failure (its text redacted), garbage,
 * or a body that ended or broke before the translator said the answer was whole (unless what came
 * is whole nonetheless, `StreamTranslator.endOfBody`). After `finish` the rest of the body is read
 * and dropped, so that its connection can be used again; after an in-band failure or garbage, it is
 * released.
 */
import type { EventSplitter } from '../../lib/sse-decoder.js';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import type { CanonicalEvents, EventSink } from '../provider.js';
import { BodyEventReader } from './body-event-reader.js';
import { failureText } from './passthrough-reader.js';
import type { StreamTranslator } from './stream-translator.js';
import type { UpstreamBody, UpstreamHttpClient } from './upstream-http.js';

/** The message of the `error` event for a body that ended before the answer was whole. */
export const CUT_SHORT = 'The upstream closed the stream before the answer was complete.';

export class CanonicalReader extends BodyEventReader<EventSink> implements CanonicalEvents {
  readonly #translator: StreamTranslator;
  readonly #client: Pick<UpstreamHttpClient, 'safeText'>;

  /**
   * `client` redacts the upstream's failure texts; `splitter` cuts the body into events: SSE by
   * default, or another framing (Bedrock's event stream).
   */
  constructor(body: UpstreamBody, translator: StreamTranslator, client: Pick<UpstreamHttpClient, 'safeText'>, splitter?: EventSplitter) {
    super(body, splitter);
    this.#translator = translator;
    this.#client = client;
  }

  sseEvent(event: string | undefined, data: string): void {
    if (this.over) return;
    const translator = this.#translator;
    const events = translator.translate({ event, data });
    // Past the end of the answer only the connection's tail remains: read, and dropped.
    if (translator.complete) this.over = true;
    const failed = events.findIndex((canonical) => canonical.type === 'error');
    if (failed !== -1) {
      // Nothing more of this body is of use: the upstream call stops here.
      this.release();
      this.sink?.events([...events.slice(0, failed), this.#cleaned(events[failed]!)]);
    } else if (events.length > 0) {
      this.sink?.events(events);
    }
  }

  /**
   * The body is over, or unusable, before the translator said the answer was whole: the closing
   * events when what came is whole nonetheless, else the `error` that says how it broke.
   */
  protected bodyEnded(error: unknown): void {
    const closing = this.#translator.endOfBody();
    this.sink?.events(closing ?? [{ type: 'error', code: 'upstream_error', message: error === undefined ? CUT_SHORT : failureText(error) }]);
  }

  /** Upstream error texts go out redacted and cut to length: upstreams echo addresses and keys. */
  #cleaned(event: CanonicalEvent): CanonicalEvent {
    return event.type === 'error' ? { ...event, message: this.#client.safeText(event.message) } : event;
  }
}
