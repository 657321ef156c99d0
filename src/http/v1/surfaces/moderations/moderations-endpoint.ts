/**
 * `POST /v1/moderations` (docs/wire-protocols.md §11) as a whole answer (whole-answer.ts): passed
 * through where the upstream speaks it, priced like any model on its input (free unless the catalog
 * prices it). OpenAI reports no usage here, so the bill is the gateway's own count of the input.
 */
import { GatewayError } from '../../../../errors/gateway-error.js';
import { countModerationTokens, decodeModerationsRequest, type ModerationsRequest } from '../../../../protocol/moderations.js';
import { servesEndpoint } from '../../../../routing/catalog.js';
import { jsonOf, type WholeEndpoint } from '../../whole-answer.js';

export const moderationsEndpoint: WholeEndpoint<ModerationsRequest> = {
  surface: 'moderations',
  decode: (body) => decodeModerationsRequest(jsonOf(body)),
  countInput: (request) => () => countModerationTokens(request),
  serves: (target) => servesEndpoint(target.provider, 'moderations'),
  async call(target, request, body, signal, requestId) {
    const moderate = target.provider.moderate;
    if (moderate === undefined) throw new GatewayError('model_unavailable');
    return moderate({ upstreamModel: target.upstreamModel, request, body: jsonOf(body), signal, requestId });
  },
  answer: (result, request) => ({ ...result.body, model: request.model }),
};
