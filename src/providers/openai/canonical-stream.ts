/**
 * The canonical path's stream driver: POST, wait for the 200, then translate the upstream's SSE
 * stream into canonical events, ending every stream with either `finish` or one `error` event.
 * Leaving the iteration early aborts the upstream request, so the upstream sees the connection
 * close and stops generating (and billing us).
 */
import type { CanonicalEvent } from '../../protocol/canonical.js';
import { decodeSse } from '../../lib/sse-decoder.js';
import type { ProviderCall } from '../provider.js';
import { inBandErrorMessage } from './chat-wire.js';
import { describeStreamFailure, type UpstreamHttpClient } from './http-client.js';
import { UnreadableStreamError, type StreamTranslator } from './stream-translator.js';

export interface CanonicalRoute {
  /** Path under the base address, e.g. `/chat/completions`. */
  path: string;
  body: unknown;
  translator: StreamTranslator;
  /** Events of a whole JSON answer, for upstreams that ignore `stream: true`. */
  jsonEvents: (body: Record<string, unknown>) => CanonicalEvent[];
}

const CUT_SHORT = 'The upstream closed the stream before the answer was complete.';

export async function* streamCanonical(client: UpstreamHttpClient, route: CanonicalRoute, call: ProviderCall): AsyncGenerator<CanonicalEvent> {
  const controller = new AbortController();
  const signal = AbortSignal.any([call.signal, controller.signal]);
  // Throws UpstreamError before anything is yielded, so that the router can still fail over.
  const response = await client.post(route.path, route.body, { signal, requestId: call.requestId, stream: true });
  let bodyFinished = false;
  try {
    if (response.mediaType === 'application/json') {
      const json = await client.readJsonObject(response, signal);
      bodyFinished = true;
      if (json.error !== undefined && json.error !== null) {
        throw client.failure('protocol', `upstream answered 200 with an error: ${inBandErrorMessage(json.error)}`);
      }
      yield { type: 'response-start', upstreamModel: call.upstreamModel };
      yield* redactErrors(route.jsonEvents(json), client);
      return;
    }

    yield { type: 'response-start', upstreamModel: call.upstreamModel };
    const translator = route.translator;
    let failure: string | undefined;
    try {
      for await (const sse of decodeSse(response.body)) {
        // Past the end of the answer only the connection's tail remains; read it for keep-alive.
        if (translator.complete) continue;
        for (const event of translator.translate(sse)) {
          if (event.type === 'error') {
            yield { ...event, message: client.redact(event.message) };
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
    if (!bodyFinished) {
      controller.abort();
      response.body.destroy();
    }
  }
}

function* redactErrors(events: CanonicalEvent[], client: UpstreamHttpClient): Generator<CanonicalEvent> {
  for (const event of events) yield event.type === 'error' ? { ...event, message: client.redact(event.message) } : event;
}
