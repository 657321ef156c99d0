/**
 * An OpenAI-compatible upstream's own server-sent events (images, transcriptions and speech with
 * `stream`), read as `EventFrame`s to hand to the client as they are: each event's JSON, with its
 * `event:` name when it has one. The one reader of such streams: a data line that is not a JSON
 * object, or an `error` event, is the upstream failing, thrown as an UpstreamError (the client's
 * stream then ends with an error event: http/v1/whole-stream.ts); a body that breaks is a
 * transport failure; `[DONE]` ends the events. Leaving the loop early destroys the body, which
 * stops the upstream call. Which event ends the stream, and what it reports, is the caller's.
 */
import { isRecord, parseJson } from '../../lib/json-value.js';
import { decodeSse } from '../../lib/sse-decoder.js';
import { UpstreamError, type EventFrame } from '../provider.js';
import type { UpstreamBody, UpstreamHttpClient } from './upstream-http.js';

/** Most characters of one event: a partial image in base64 is a few MB. */
const MAX_EVENT_LENGTH = 64 * 1024 * 1024;

/** The events of `body`; `what` names the stream in failures ("the images stream"). */
export async function* readUpstreamEvents(client: UpstreamHttpClient, body: UpstreamBody, signal: AbortSignal, what: string): AsyncGenerator<EventFrame> {
  try {
    for await (const { event, data } of decodeSse(body, { maxEventLength: MAX_EVENT_LENGTH })) {
      if (data === '[DONE]') return;
      const parsed = parseJson(data);
      if (!parsed.ok || !isRecord(parsed.value)) throw client.failure('protocol', `${what} sent an event that is not a JSON object`);
      const frame = parsed.value;
      if (event === 'error' || frame.type === 'error' || frame.error !== undefined) throw client.failure('protocol', `${what} failed: ${client.safeText(data)}`);
      yield event === undefined || event === 'message' ? { data: frame } : { event, data: frame };
    }
  } catch (error) {
    if (error instanceof UpstreamError || signal.aborted) throw error;
    throw client.transportFailure(error);
  }
}

/** A usage object's whole-number field, or undefined. */
export function countField(usage: Record<string, unknown>, field: string): number | undefined {
  const value = usage[field];
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
