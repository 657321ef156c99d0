/**
 * The canonical path's stream driver, the same for every HTTP provider: POST, wait for the 200,
 * then translate the upstream's SSE stream into canonical events, ending every stream with either
 * `finish` or one `error` event. Leaving the iteration early aborts the upstream request, so the
 * upstream sees the connection close and stops generating (and billing us).
 */
import type { CanonicalEvent } from '../../protocol/canonical.js';
import { decodeSse, type SseEvent } from '../../lib/sse-decoder.js';
import type { ProviderCall } from '../provider.js';
import { UnreadableStreamError, type StreamTranslator } from './stream-translator.js';
import { describeStreamFailure } from './transport-failure.js';
import type { UpstreamBody, UpstreamHttpClient } from './upstream-http.js';

/** What one canonical call sends, and how its answer is read. */
export interface CanonicalRoute {
  /** Path under the base address (query included), e.g. `/chat/completions`. */
  path: string;
  body: unknown;
  /** Reads the SSE stream; one instance per call. */
  translator: StreamTranslator;
  /**
   * The events of a whole answer body, for upstreams that answer `application/json` although asked
   * to stream. Runs before `response-start`: an `UpstreamError` thrown here (an error object sent
   * with the 200, say) still lets the router fail over, and so does `UnreadableStreamError`.
   */
  wholeBody: (text: string) => CanonicalEvent[];
  /**
   * How the body is split into events, for a stream that is not SSE (Bedrock's binary event
   * stream, docs/wire-protocols.md §18.4): each message as an event. SSE by default.
   */
  decode?: (body: UpstreamBody) => AsyncIterable<SseEvent>;
}

/** The message of the `error` event for a body that ended before the answer was whole. */
export const CUT_SHORT = 'The upstream closed the stream before the answer was complete.';

export async function* streamCanonical(client: UpstreamHttpClient, route: CanonicalRoute, call: ProviderCall): AsyncGenerator<CanonicalEvent> {
  // The client's signal as is: leaving early destroys the body, which aborts the request itself
  // (no second controller and AbortSignal.any per call).
  const signal = call.signal;
  // Throws UpstreamError before anything is yielded, so that the router can still fail over.
  const response = await client.post(route.path, route.body, { signal, requestId: call.requestId, stream: true });
  let bodyFinished = false;
  try {
    if (response.mediaType === 'application/json') {
      const text = await client.readWholeBody(response, signal);
      bodyFinished = true;
      const events = wholeBodyEvents(client, route, text);
      yield { type: 'response-start', upstreamModel: call.upstreamModel };
      for (const event of events) yield cleaned(client, event);
      return;
    }

    yield { type: 'response-start', upstreamModel: call.upstreamModel };
    const translator = route.translator;
    let failure: string | undefined;
    try {
      for await (const sse of (route.decode ?? decodeSse)(response.body)) {
        // Past the end of the answer only the connection's tail remains; read it for keep-alive.
        if (translator.complete) continue;
        for (const event of translator.translate(sse)) {
          if (event.type === 'error') {
            yield cleaned(client, event);
            return;
          }
          yield event;
        }
      }
      bodyFinished = true;
    } catch (error) {
      failure = error instanceof UnreadableStreamError ? error.message : describeStreamFailure(error);
    }
    if (translator.complete) return;
    const closing = translator.endOfBody();
    if (closing !== undefined) {
      yield* closing;
      return;
    }
    yield { type: 'error', code: 'upstream_error', message: failure ?? CUT_SHORT };
  } finally {
    if (!bodyFinished) response.body.destroy();
  }
}

function wholeBodyEvents(client: UpstreamHttpClient, route: CanonicalRoute, text: string): CanonicalEvent[] {
  try {
    return route.wholeBody(text);
  } catch (error) {
    if (!(error instanceof UnreadableStreamError)) throw error;
    throw client.failure('protocol', error.message, { cause: error });
  }
}

/** Upstream error texts go out redacted and cut to length: upstreams echo addresses and keys. */
function cleaned(client: UpstreamHttpClient, event: CanonicalEvent): CanonicalEvent {
  return event.type === 'error' ? { ...event, message: client.safeText(event.message) } : event;
}
