/**
 * Speech on an OpenAI-compatible upstream: the client's body passed through with the upstream's
 * model name; once it answered 200 its audio is handed on as it arrives, with the upstream's own
 * content type (OpenAI sends one per format; docs/wire-protocols.md §10.2). With `stream_format:
 * "sse"` its events are handed on, `speech.audio.done` reporting the tokens billed.
 */
import type { EventFrame, SpeechCall, SpeechResult } from '../provider.js';
import { countField, readUpstreamEvents } from '../shared/event-frames.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';
import type { EndpointPath } from './endpoint-path.js';

export async function runSpeech(client: UpstreamHttpClient, pathOf: EndpointPath, call: SpeechCall): Promise<SpeechResult> {
  const body = { ...call.body, model: call.upstreamModel };
  const stream = call.request.stream;
  const options = { signal: call.signal, requestId: call.requestId, stream, extraHeaders: { accept: stream ? 'text/event-stream' : 'application/octet-stream' } };
  const response = await client.post(pathOf('/audio/speech', call.upstreamModel), body, options);
  if (stream) {
    if (response.mediaType !== 'text/event-stream') throw client.failure('protocol', `the speech answer is ${response.mediaType || 'untyped'}, not events`);
    return { events: speechFrames(readUpstreamEvents(client, response.body, call.signal, 'the speech stream')) };
  }
  if (response.mediaType === 'application/json') {
    // A JSON body where audio was due: an error object in a 200, or a proxy's page.
    const text = await client.readWholeBody(response, call.signal);
    throw client.failure('protocol', `the speech answer is JSON, not audio: ${client.safeText(text)}`);
  }
  return { contentType: response.mediaType === '' ? 'application/octet-stream' : response.mediaType, audio: response.body };
}

/** The events up to `speech.audio.done`, which carries the report. */
async function* speechFrames(events: AsyncIterable<EventFrame>): AsyncGenerator<EventFrame> {
  for await (const frame of events) {
    const report = speechReport(frame.data);
    if (report === undefined) {
      yield frame;
      continue;
    }
    yield { ...frame, report };
    return;
  }
}

/** `speech.audio.done` ends the events; its usage is billed (tokens, in place of the characters). */
function speechReport(data: Record<string, unknown>): EventFrame['report'] {
  if (data.type !== 'speech.audio.done') return undefined;
  const usage = typeof data.usage === 'object' && data.usage !== null ? (data.usage as Record<string, unknown>) : {};
  const inputTokens = countField(usage, 'input_tokens');
  const outputTokens = countField(usage, 'output_tokens');
  // No counts: the characters held are billed, as for the audio itself.
  if (inputTokens === undefined || outputTokens === undefined) return {};
  return { reportedUsage: { inputTokens, cachedInputTokens: 0, outputTokens, reasoningTokens: 0 }, units: {} };
}
