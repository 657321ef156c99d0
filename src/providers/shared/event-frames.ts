/**
 * An OpenAI-compatible upstream's own server-sent events (images, transcriptions and speech with
 * `stream`), read as `EventFrame`s to hand to the client as they are: each event's JSON, with its
 * `event:` name when it has one. The provider says which event ends the stream and what it
 * reports (`report`); a data line that is not a JSON object is the upstream's garbage, thrown as
 * an UpstreamError (the client's stream then ends with an error event: http/v1/whole-stream.ts).
 */
import { decodeSse } from '../../lib/sse-decoder.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import { UpstreamError, type EventFrame } from '../provider.js';
import type { UpstreamBody } from './upstream-http.js';

/** Most characters of one event: a partial image in base64 is a few MB. */
const MAX_EVENT_LENGTH = 64 * 1024 * 1024;

export async function* readEventFrames(body: UpstreamBody, reportOf: (data: Record<string, unknown>) => EventFrame['report']): AsyncGenerator<EventFrame> {
  for await (const { event, data } of decodeSse(body, { maxEventLength: MAX_EVENT_LENGTH })) {
    if (data === '[DONE]') return;
    const parsed = parseJson(data);
    if (!parsed.ok || !isRecord(parsed.value)) throw new UpstreamError('protocol', 'the upstream sent an event that is not a JSON object');
    const report = reportOf(parsed.value);
    yield { ...(event === undefined || event === 'message' ? {} : { event }), data: parsed.value, ...(report === undefined ? {} : { report }) };
    if (report !== undefined) return;
  }
}

/** A usage object's whole-number field, or undefined. */
export function countField(usage: Record<string, unknown>, field: string): number | undefined {
  const value = usage[field];
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
