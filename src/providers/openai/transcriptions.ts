/**
 * Transcriptions and translations on an OpenAI-compatible upstream (docs/wire-protocols.md §9,
 * §15): the client's fields and file forwarded as a multipart body, in the order sent, the file
 * from the chunks it was read in (never a second copy), with the upstream's model name in
 * `model`. The answer is read per format: JSON whole (an error object in a 200 fails over), a
 * text document (`text`, `srt`, `vtt`) whole, server-sent events as they come. A model that
 * ignores `stream` (`whisper-1`) answers JSON to a stream request: that is passed on as JSON.
 */
import { isJsonFormat } from '../../protocol/transcriptions.js';
import type { TranscriptionCall, TranscriptionResult } from '../provider.js';
import { readUpstreamEvents } from '../shared/event-frames.js';
import { MultipartBody, type MultipartValue } from '../shared/multipart-body.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';
import type { EndpointPath } from './endpoint-path.js';

/** The upstream's body: every field and file as the client sent them, the model renamed. */
export function transcriptionBody(call: TranscriptionCall): MultipartBody {
  const parts: Array<[string, MultipartValue]> = [];
  for (const [name, values] of call.request.fields) {
    for (const value of values) {
      if (name === 'model') parts.push([name, call.upstreamModel]);
      else parts.push([name, typeof value === 'string' ? value : { filename: value.filename, contentType: value.contentType, chunks: value.chunks }]);
    }
  }
  return new MultipartBody(parts);
}

export async function runTranscription(client: UpstreamHttpClient, pathOf: EndpointPath, call: TranscriptionCall): Promise<TranscriptionResult> {
  const path = pathOf(call.request.endpoint === 'translations' ? '/audio/translations' : '/audio/transcriptions', call.upstreamModel);
  const body = transcriptionBody(call);
  if (call.request.stream) {
    const response = await client.post(path, body, { signal: call.signal, requestId: call.requestId, stream: true });
    if (response.mediaType === 'text/event-stream') return { kind: 'events', events: readUpstreamEvents(client, response.body, call.signal, 'the transcription stream') };
    return { kind: 'json', body: jsonAnswer(client, await client.readWholeBody(response, call.signal)) };
  }
  const json = isJsonFormat(call.request.responseFormat);
  const extraHeaders = json ? undefined : { accept: 'text/plain, application/json;q=0.5' };
  const options = { signal: call.signal, requestId: call.requestId, stream: false, ...(extraHeaders === undefined ? {} : { extraHeaders }) };
  const answer = await client.postForWhole(path, body, options);
  if (json) return { kind: 'json', body: jsonAnswer(client, answer.text) };
  // A JSON body where a text document was due: an error object in a 200, or a proxy's page.
  if (answer.mediaType === 'application/json') throw client.failure('protocol', `the ${call.request.responseFormat} answer is JSON: ${client.safeText(answer.text)}`);
  const mediaType = answer.mediaType === '' ? 'text/plain' : answer.mediaType;
  return { kind: 'text', contentType: mediaType.startsWith('text/') ? `${mediaType}; charset=utf-8` : mediaType, text: answer.text };
}

function jsonAnswer(client: UpstreamHttpClient, text: string): Record<string, unknown> {
  const json = client.parseJsonObject(text);
  if (json.error !== undefined && json.error !== null) throw client.failure('protocol', `upstream answered 200 with an error: ${client.safeText(JSON.stringify(json.error))}`);
  if (typeof json.text !== 'string') throw client.failure('protocol', 'the transcription answer has no text');
  return json;
}
