/**
 * Embeddings on Gemini (docs/wire-protocols.md §7.4–7.5): the texts go to
 * `models/{model}:batchEmbedContents` in chunks of at most 100 (Gemini's limit), one after another,
 * and the vectors come back in input order, written as the client asked (floats or base64). Token
 * arrays have no Gemini equivalent and are refused (400). Gemini documents no token count; an
 * undocumented `usageMetadata.promptTokenCount` is read when every chunk carries one, and otherwise
 * the gateway counts the input itself (the meter does, when no count is reported).
 */
import { isRecord } from '../../lib/json-value.js';
import { embeddingsAnswer, embeddingTexts } from '../../protocol/embeddings.js';
import type { EmbeddingsCall, EmbeddingsResult } from '../provider.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';

/** Most requests in one `batchEmbedContents` call. */
export const GEMINI_EMBED_BATCH = 100;

function modelPath(upstreamModel: string): string {
  return upstreamModel.startsWith('models/') ? upstreamModel : `models/${upstreamModel}`;
}

export async function runGeminiEmbeddings(client: UpstreamHttpClient, call: EmbeddingsCall): Promise<EmbeddingsResult> {
  const texts = embeddingTexts(call.request);
  if (texts === null) {
    const message = 'Token arrays cannot be embedded by this model: send the input as text.';
    throw client.failure('status', message, { status: 400, clientMessage: message });
  }
  const model = modelPath(call.upstreamModel);
  const dimensions = call.request.dimensions;
  const vectors: number[][] = [];
  let promptTokens: number | undefined = 0;
  for (let start = 0; start < texts.length; start += GEMINI_EMBED_BATCH) {
    const requests = texts.slice(start, start + GEMINI_EMBED_BATCH).map((text) => ({
      model,
      content: { parts: [{ text }] },
      ...(dimensions === undefined ? {} : { outputDimensionality: dimensions }),
    }));
    const answer = await client.postForWhole(`/${model.split('/').map(encodeURIComponent).join('/')}:batchEmbedContents`, { requests }, { signal: call.signal, requestId: call.requestId, stream: false });
    const json = client.parseJsonObject(answer.text);
    const embeddings = json.embeddings;
    if (!Array.isArray(embeddings) || embeddings.length !== requests.length) {
      throw client.failure('protocol', `the batchEmbedContents answer has ${Array.isArray(embeddings) ? embeddings.length : 'no'} embeddings for ${requests.length} requests`);
    }
    for (const embedding of embeddings) {
      const values = isRecord(embedding) ? embedding.values : undefined;
      if (!Array.isArray(values) || !values.every((value) => typeof value === 'number' && Number.isFinite(value))) {
        throw client.failure('protocol', 'an embedding in the batchEmbedContents answer has no numeric values');
      }
      vectors.push(values as number[]);
    }
    const count = isRecord(json.usageMetadata) ? json.usageMetadata.promptTokenCount : undefined;
    promptTokens = promptTokens !== undefined && typeof count === 'number' && Number.isSafeInteger(count) && count >= 0 ? promptTokens + count : undefined;
  }
  return { body: embeddingsAnswer(vectors, call.request.encodingFormat), ...(promptTokens === undefined ? {} : { reportedInputTokens: promptTokens }) };
}
