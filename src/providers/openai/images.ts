/**
 * Images on an OpenAI-compatible upstream (docs/wire-protocols.md §8, §16): generations pass the
 * client's JSON through with the upstream's model name; edits send the client's form again, its
 * fields and files in the order they came (the files from the chunks they were read in), the
 * model replaced. A whole answer must be a JSON object with a `data` array; a streamed one must be
 * server-sent events, and its first event is read before the call resolves, so that an upstream
 * answering something else fails over before the gateway commits to a 200. Later events that are
 * not JSON objects, an `error` event, or a cut body end the stream as a failure.
 */
import type { ImageStreamEvent, ImagesCall, ImagesResult } from '../provider.js';
import { readUpstreamEvents } from '../shared/event-frames.js';
import { MultipartBody } from '../shared/multipart-body.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';
import type { EndpointPath } from './endpoint-path.js';

function bodyOf(pathOf: EndpointPath, call: ImagesCall): { path: string; body: unknown } {
  if (call.body.kind === 'generation') return { path: pathOf('/images/generations', call.upstreamModel), body: { ...call.body.json, model: call.upstreamModel } };
  const model = call.upstreamModel;
  const fields = call.body.form.map(([name, value]) => [name, name === 'model' ? model : value] as const);
  return { path: pathOf('/images/edits', model), body: new MultipartBody(fields) };
}

export async function runImages(client: UpstreamHttpClient, pathOf: EndpointPath, call: ImagesCall): Promise<ImagesResult> {
  const { path, body } = bodyOf(pathOf, call);
  const options = { signal: call.signal, requestId: call.requestId, stream: call.body.request.stream };
  if (!call.body.request.stream) {
    const answer = await client.postForWhole(path, body, options);
    const json = client.parseJsonObject(answer.text);
    if (!Array.isArray(json.data)) throw client.failure('protocol', 'the images answer has no data array');
    return { kind: 'json', body: json };
  }
  const response = await client.post(path, body, options);
  if (response.mediaType !== 'text/event-stream') {
    const text = await client.readWholeBody(response, call.signal);
    throw client.failure('protocol', `the images answer is not an event stream (${response.mediaType || 'no content type'}): ${client.safeText(text)}`);
  }
  const events = readUpstreamEvents(client, response.body, call.signal, 'the images stream')[Symbol.asyncIterator]();
  // The first event before the 200 is committed: garbage or an error here fails over.
  const first = await events.next();
  return { kind: 'stream', events: replay(first, events) };
}

async function* replay(first: IteratorResult<ImageStreamEvent>, rest: AsyncIterator<ImageStreamEvent>): AsyncGenerator<ImageStreamEvent> {
  if (first.done === true) return;
  yield first.value;
  try {
    for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
  } finally {
    await rest.return?.();
  }
}
