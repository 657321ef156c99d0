/**
 * The canonical path's call, the same for every HTTP provider: POST, wait for the 200, then read the
 * upstream's stream into canonical events in one loop (canonical-reader.ts), every answer ending
 * with either `finish` or one `error` event. Releasing the events (or leaving `stream`'s iteration
 * early) aborts the upstream request, so the upstream sees the connection close and stops
 * generating (and billing us).
 */
import type { EventSplitter } from '../../lib/sse-decoder.js';
import type { CanonicalEvent, CanonicalRequest } from '../../protocol/canonical.js';
import type { CanonicalEvents, Provider, ProviderCall } from '../provider.js';
import { EventList, iterateEvents } from './canonical-events.js';
import { CanonicalReader } from './canonical-reader.js';
import { UnreadableStreamError, type StreamTranslator } from './stream-translator.js';
import type { UpstreamHttpClient } from './upstream-http.js';

/** What one canonical call sends, and how its answer is read. */
export interface CanonicalRoute {
  /** Path under the base address (query included), e.g. `/chat/completions`. */
  path: string;
  body: unknown;
  /** Reads the stream's events; one instance per call. */
  translator: StreamTranslator;
  /**
   * The events of a whole answer body, for upstreams that answer `application/json` although asked
   * to stream. Runs before the call is opened: an `UpstreamError` thrown here (an error object sent
   * with the 200, say) still lets the router fail over, and so does `UnreadableStreamError`.
   */
  wholeBody: (text: string) => CanonicalEvent[];
  /**
   * How the body is cut into events, for a stream that is not SSE (Bedrock's binary event stream,
   * docs/wire-protocols.md §18.4): each message as an event; one instance per call. SSE by default.
   */
  splitter?: EventSplitter;
}

/** A provider's canonical path, from how it builds a call's route: `openEvents`, and `stream` reading the same events. */
export function canonicalPath(client: UpstreamHttpClient, routeOf: (request: CanonicalRequest, call: ProviderCall) => CanonicalRoute | Promise<CanonicalRoute>): Required<Pick<Provider, 'stream' | 'openEvents'>> {
  // Async, so that a request the route cannot be built for (a 400 `UpstreamError`) is a rejection;
  // a route may itself wait (Bedrock's, for AWS's libraries: bedrock/aws-sdk.ts).
  const openEvents = async (request: CanonicalRequest, call: ProviderCall): Promise<CanonicalEvents> => openCanonical(client, await routeOf(request, call), call);
  return {
    openEvents,
    stream: (request, call) => iterateEvents(() => openEvents(request, call), call.upstreamModel),
  };
}

/**
 * Sends the call and resolves once the upstream accepted it (a 200 with a stream, or with a whole
 * answer that reads); throws `UpstreamError` before that, so that the router can still fail over.
 */
export async function openCanonical(client: UpstreamHttpClient, route: CanonicalRoute, call: ProviderCall): Promise<CanonicalEvents> {
  // The client's signal as is: releasing the events destroys the body, which aborts the request
  // itself (no second controller and AbortSignal.any per call).
  const response = await client.post(route.path, route.body, { signal: call.signal, requestId: call.requestId, stream: true });
  if (response.mediaType !== 'application/json') return new CanonicalReader(response.body, route.translator, client, route.splitter);
  let text: string;
  try {
    text = await client.readWholeBody(response, call.signal);
  } catch (error) {
    response.body.destroy();
    throw error;
  }
  return new EventList(endedAtFailure(client, wholeBodyEvents(client, route, text)));
}

function wholeBodyEvents(client: UpstreamHttpClient, route: CanonicalRoute, text: string): CanonicalEvent[] {
  try {
    return route.wholeBody(text);
  } catch (error) {
    if (!(error instanceof UnreadableStreamError)) throw error;
    throw client.failure('protocol', error.message, { cause: error });
  }
}

/** The events up to the first failure, its text redacted and cut to length: upstreams echo addresses and keys. */
function endedAtFailure(client: UpstreamHttpClient, events: CanonicalEvent[]): CanonicalEvent[] {
  const failed = events.findIndex((event) => event.type === 'error');
  if (failed === -1) return events;
  const failure = events[failed]!;
  return [...events.slice(0, failed), failure.type === 'error' ? { ...failure, message: client.safeText(failure.message) } : failure];
}
