/**
 * Embeddings on an OpenAI-compatible upstream: the client's body is passed through with the
 * upstream's model name (`encoding_format` as the client asked, so a base64 vector comes back as the
 * upstream wrote it), and the answer is checked before the gateway commits to it: one vector per
 * input, and the upstream's `usage.prompt_tokens` read for the bill (docs/wire-protocols.md §7).
 */
import type { EmbeddingsCall, EmbeddingsResult } from '../provider.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';
import type { EndpointPath } from './endpoint-path.js';

export async function runEmbeddings(client: UpstreamHttpClient, pathOf: EndpointPath, call: EmbeddingsCall): Promise<EmbeddingsResult> {
  const body = { ...call.body, model: call.upstreamModel };
  const answer = await client.postForWhole(pathOf('/embeddings', call.upstreamModel), body, { signal: call.signal, requestId: call.requestId, stream: false });
  const json = client.parseJsonObject(answer.text);
  const data = json.data;
  if (!Array.isArray(data) || data.length !== call.request.inputs.length) {
    throw client.failure('protocol', `the embeddings answer has ${Array.isArray(data) ? data.length : 'no'} vectors for ${call.request.inputs.length} inputs`);
  }
  const usage = json.usage;
  const promptTokens = typeof usage === 'object' && usage !== null ? (usage as Record<string, unknown>).prompt_tokens : undefined;
  return { body: json, ...(typeof promptTokens === 'number' && Number.isSafeInteger(promptTokens) ? { reportedInputTokens: promptTokens } : {}) };
}
