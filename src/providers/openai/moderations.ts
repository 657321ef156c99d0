/**
 * Moderations on an OpenAI-compatible upstream: the client's body passed through with the upstream's
 * model name; the answer is checked for one result per input before the gateway commits to it.
 */
import type { ModerationsCall, ModerationsResult } from '../provider.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';
import type { EndpointPath } from './endpoint-path.js';

export async function runModerations(client: UpstreamHttpClient, pathOf: EndpointPath, call: ModerationsCall): Promise<ModerationsResult> {
  const body = { ...call.body, model: call.upstreamModel };
  const answer = await client.postForWhole(pathOf('/moderations', call.upstreamModel), body, { signal: call.signal, requestId: call.requestId, stream: false });
  const json = client.parseJsonObject(answer.text);
  const results = json.results;
  const expected = call.request.input.every((item) => typeof item === 'string') ? call.request.input.length : 1;
  if (!Array.isArray(results) || results.length !== expected) {
    throw client.failure('protocol', `the moderations answer has ${Array.isArray(results) ? results.length : 'no'} results for ${expected} inputs`);
  }
  return { body: json };
}
