/**
 * POST /v1/messages/count_tokens (Anthropic): the input tokens a Messages request would take, as
 * `{"input_tokens": n}`. Counted by the gateway with the tokenizer its holds use (the same estimate
 * the hold and the token rate limit are sized with); costs nothing, like Anthropic's.
 */
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { decodeMessagesRequest } from '../../../../protocol/anthropic-messages/decode-request.js';
import { estimateInputTokens } from '../../../../protocol/tokens.js';
import type { Catalog } from '../../../../routing/catalog.js';
import type { Router } from '../../../../routing/router.js';
import { resolveModel } from '../../answer.js';
import { requireContext } from '../../api-hooks.js';
import { parseJsonBody } from '../../../body.js';

export function registerCountTokensRoute(app: FastifyInstance, deps: { onRequest: onRequestAsyncHookHandler[]; catalog: Catalog; router: Router }): void {
  app.post('/v1/messages/count_tokens', { onRequest: deps.onRequest }, async (request) => {
    const context = requireContext(request);
    const { request: canonical } = decodeMessagesRequest(parseJsonBody(request.body), { countOnly: true });
    resolveModel(deps, canonical.model, context);
    return { input_tokens: estimateInputTokens(canonical) };
  });
}
