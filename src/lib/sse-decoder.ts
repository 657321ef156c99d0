/**
 * The project's one server-sent-events decoder (docs/architecture.md, "Streams"): bytes in, events out.
 * Framing follows the WHATWG event-stream grammar through `eventsource-parser`
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream):
 * CRLF, CR and LF line ends, `data:` lines joined with `\n`, `:` comments skipped.
 */
import { createParser, type ParseError } from 'eventsource-parser';

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

/** 16 Mi characters: far above any real chunk, small enough to stop a runaway upstream. */
const DEFAULT_MAX_EVENT_LENGTH = 16 * 1024 * 1024;

/**
 * Decodes an SSE byte stream into events, in order. Chunks may split anywhere, even inside a
 * multi-byte UTF-8 sequence. An event still unfinished when the body ends is dropped, as the SSE
 * grammar requires (a truncated event is not an event). Leaving the iteration early returns the
 * body's iterator, which for a Node stream destroys it.
 */
export async function* decodeSse(body: AsyncIterable<Uint8Array>, options: DecodeSseOptions = {}): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder('utf-8');
  const ready: SseEvent[] = [];
  let failure: ParseError | undefined;
  const parser = createParser({
    onEvent: (message) => ready.push({ event: message.event, data: message.data }),
    onError: (error) => {
      // Unknown fields and bad `retry:` values are ignorable by the grammar; only overflow is fatal.
      if (error.type === 'max-buffer-size-exceeded') failure = error;
    },
    maxBufferSize: options.maxEventLength ?? DEFAULT_MAX_EVENT_LENGTH,
  });

  // The parser holds back a CR that ends a chunk, since an LF may follow; at the end of the body
  // that CR is known to be a line end, so it is completed by hand.
  let endsWithCr = false;
  const feed = (text: string): void => {
    if (text !== '') {
      parser.feed(text);
      endsWithCr = text.endsWith('\r');
    }
    if (failure !== undefined) throw new SseDecodeError('An SSE event exceeded the size limit.', { cause: failure });
  };

  for await (const chunk of body) {
    feed(decoder.decode(chunk, { stream: true }));
    // Hand events out one by one so `for await` backpressure reaches the body.
    for (let event = ready.shift(); event !== undefined; event = ready.shift()) yield event;
  }
  feed(decoder.decode());
  if (endsWithCr) feed('\n');
  for (let event = ready.shift(); event !== undefined; event = ready.shift()) yield event;
}
