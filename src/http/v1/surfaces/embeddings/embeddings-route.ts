/**
 * `POST /v1/embeddings` (docs/wire-protocols.md §7): a whole answer under the same lifecycle as the
 * generative endpoints (answer-lifecycle.ts): decode → model (it must serve embeddings) → token
 * limit → hold → route (failing over before an answer) → settle → send. The hold is the bound of the
 * whole body, as for a chat request (protocol/input-bound.ts), with no output; the bill is the
 * upstream's reported input tokens when sane, else the gateway's exact count of the inputs. The
 * answer names the client's model and the usage billed, in the encoding the client asked for.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { UsageMeter } from '../../../../billing/usage-meter.js';
import { GatewayError } from '../../../../errors/gateway-error.js';
import { runYielding } from '../../../../lib/run-yielding.js';
import { countEmbeddingTokens, decodeEmbeddingsRequest, type EmbeddingsRequest } from '../../../../protocol/embeddings.js';
import { walkInputBound } from '../../../../protocol/input-bound.js';
import type { EmbeddingsResult } from '../../../../providers/provider.js';
import type { Target } from '../../../../routing/catalog.js';
import { parseJsonBody } from '../../../body.js';
import { toGatewayError } from '../../../errors.js';
import { resolveModel, type AnswerServices } from '../../answer.js';
import { AnswerLifecycle } from '../../answer-lifecycle.js';
import { limitTokens, requireContext } from '../../api-hooks.js';
import { requireEndpoint } from '../../models-route.js';

const SURFACE = 'embeddings';

export function registerEmbeddingsRoute(app: FastifyInstance, deps: { onRequest: onRequestAsyncHookHandler[]; services: AnswerServices }): void {
  app.post('/v1/embeddings', { onRequest: deps.onRequest, config: { surface: SURFACE } }, async (request, reply) => {
    const lifecycle = new AnswerLifecycle(deps.services, request, reply);
    try {
      return await serve(deps.services, lifecycle, request, reply);
    } catch (error) {
      if (lifecycle.clientGone) return reply.code(499).send();
      lifecycle.abort();
      lifecycle.failed(toGatewayError(error).gatewayError.errorCode);
      throw error;
    } finally {
      await lifecycle.settle();
      lifecycle.end(SURFACE);
    }
  });
}

async function serve(services: AnswerServices, lifecycle: AnswerLifecycle, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const context = requireContext(request);
  const body = parseJsonBody(request.body) as Record<string, unknown>;
  const embeddings = decodeEmbeddingsRequest(body);
  if (services.catalog.get(embeddings.model) !== undefined) lifecycle.begin(context, SURFACE, embeddings.model, false);
  const model = requireEndpoint(resolveModel(services, embeddings.model, context), SURFACE);
  const inputTokenBound = await runYielding(walkInputBound(body, { imageTokens: services.billing.inputBound(model.id).imageTokens }));
  await limitTokens(services.limiter, request, reply, inputTokenBound);
  // No sane report: the exact count of the inputs, made only then.
  const meter = new UsageMeter(() => countEmbeddingTokens(embeddings.inputs), 0);
  await lifecycle.reserve(context, { model: model.id, inputTokenBound, maxOutputTokens: 0 }, meter);
  if (lifecycle.aborted) return reply.code(499).send();

  const route = { model, requestId: request.id, stream: false, signal: lifecycle.signal, onTargetFailed: (target: Target) => lifecycle.targetFailed(target) };
  const { target, result } = await services.router.call(route, (target) => embed(target, embeddings, body, lifecycle.signal, request.id), (target) => target.provider.embed !== undefined);
  lifecycle.routed(target);
  if (result.reportedInputTokens !== undefined) {
    meter.observe({ type: 'usage', usage: { inputTokens: result.reportedInputTokens, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 } });
  }
  const usage = await meter.usage();
  const answer = { ...result.body, model: embeddings.model, usage: { prompt_tokens: usage.inputTokens, total_tokens: usage.inputTokens } };
  lifecycle.firstByte();
  return lifecycle.conclude(
    () => undefined,
    () => reply.send(answer),
  );
}

function embed(target: Target, request: EmbeddingsRequest, body: Record<string, unknown>, signal: AbortSignal, requestId: string): Promise<EmbeddingsResult> {
  const embedOn = target.provider.embed;
  // The router offers only targets whose provider embeds (the catalog checks it at startup).
  if (embedOn === undefined) throw new GatewayError('model_unavailable');
  return embedOn({ upstreamModel: target.upstreamModel, request, body, signal, requestId });
}
