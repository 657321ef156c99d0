/**
 * `POST /v1/embeddings` (docs/wire-protocols.md §7) as a whole answer (whole-answer.ts): the answer
 * names the client's model and the usage billed, its vectors in the encoding the client asked for.
 */
import { GatewayError } from '../../../../errors/gateway-error.js';
import { countEmbeddingTokens, decodeEmbeddingsRequest, type EmbeddingsRequest } from '../../../../protocol/embeddings.js';
import { servesEndpoint } from '../../../../routing/catalog.js';
import { jsonOf, type WholeEndpoint } from '../../whole-answer.js';

export const embeddingsEndpoint: WholeEndpoint<EmbeddingsRequest> = {
  surface: 'embeddings',
  decode: (body) => decodeEmbeddingsRequest(jsonOf(body)),
  countInput: (request) => () => countEmbeddingTokens(request.inputs),
  serves: (target) => servesEndpoint(target.provider, 'embeddings'),
  async call(target, request, body, signal, requestId) {
    const embed = target.provider.embed;
    if (embed === undefined) throw new GatewayError('model_unavailable');
    return embed({ upstreamModel: target.upstreamModel, request, body: jsonOf(body), signal, requestId });
  },
  answer: (result, request, usage) => ({ ...result.body, model: request.model, usage: { prompt_tokens: usage.inputTokens, total_tokens: usage.inputTokens } }),
};
