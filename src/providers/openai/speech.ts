/**
 * Speech on an OpenAI-compatible upstream: the client's body passed through with the upstream's
 * model name; once it answered 200 its audio is handed on as it arrives, with the upstream's own
 * content type (OpenAI sends one per format; docs/wire-protocols.md §10.2).
 */
import type { SpeechCall, SpeechResult } from '../provider.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';

export async function runSpeech(client: UpstreamHttpClient, call: SpeechCall): Promise<SpeechResult> {
  const body = { ...call.body, model: call.upstreamModel };
  const options = { signal: call.signal, requestId: call.requestId, stream: false, extraHeaders: { accept: 'application/octet-stream' } };
  const response = await client.post('/audio/speech', body, options);
  if (response.mediaType === 'application/json') {
    // A JSON body where audio was due: an error object in a 200, or a proxy's page.
    const text = await client.readWholeBody(response, call.signal);
    throw client.failure('protocol', `the speech answer is JSON, not audio: ${client.safeText(text)}`);
  }
  return { contentType: response.mediaType === '' ? 'application/octet-stream' : response.mediaType, audio: response.body };
}
