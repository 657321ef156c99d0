/**
 * The handler of the endpoints whose answer is one body, not a stream of canonical events
 * (embeddings, moderations: JSON; speech: audio streamed as it arrives): the same lifecycle as the generative endpoints (answer-lifecycle.ts):
 * decode → model (it must serve the endpoint) → token limit → hold → route (failing over before an
 * answer) → settle → send. The hold is the bound of the whole body (protocol/input-bound.ts) at the
 * input price, with no output; the bill is the upstream's reported input tokens when sane, else the
 * gateway's exact count of the input. Each endpoint says how, in a `WholeEndpoint`.
 */
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { UsageMeter, type InputCount } from '../../billing/usage-meter.js';
import { runYielding } from '../../lib/run-yielding.js';
import { SURFACE_PATHS, type Surface, type Usage } from '../../protocol/canonical.js';
import { walkInputBound } from '../../protocol/input-bound.js';
import type { Target } from '../../routing/catalog.js';
import { parseJsonBody } from '../body.js';
import { resolveModel, type AnswerServices } from './answer.js';
import { runAnswer, type AnswerLifecycle } from './answer-lifecycle.js';
import { limitTokens, requireContext } from './api-hooks.js';
import { requireEndpoint } from './models-route.js';

/**
 * What a target answered: the body in the client's wire format, and the input it reported, if any;
 * or a binary answer (speech) to stream to the client as it arrives, with its content type.
 */
export interface WholeResult {
  body: Record<string, unknown>;
  reportedInputTokens?: number;
  binary?: { contentType: string; stream: Readable };
}

export interface WholeEndpoint<Request extends { model: string }> {
  surface: Surface;
  /** The request, or the 400 (InvalidRequestError) OpenAI would answer. */
  decode(body: Record<string, unknown>): Request;
  /** The gateway's exact count of the input, run only when the upstream reports none. */
  countInput(request: Request): InputCount;
  /**
   * What the hold covers of the input, when the endpoint knows it exactly (speech: its characters);
   * by default the bound of the whole body (protocol/input-bound.ts).
   */
  inputBound?(request: Request): number;
  /** Whether a target's provider can serve the endpoint (the catalog checks it at startup). */
  serves(target: Target): boolean;
  /** One call on one target; resolves once it answered 200 with a readable answer. */
  call(target: Target, request: Request, body: Readonly<Record<string, unknown>>, signal: AbortSignal, requestId: string): Promise<WholeResult>;
  /** The JSON body sent to the client, given the usage billed (a binary answer is sent as it is). */
  answer(result: WholeResult, request: Request, usage: Usage): Record<string, unknown>;
}

export function registerWholeRoute<Request extends { model: string }>(
  app: FastifyInstance,
  endpoint: WholeEndpoint<Request>,
  deps: { onRequest: onRequestAsyncHookHandler[]; services: AnswerServices },
): void {
  app.post(SURFACE_PATHS[endpoint.surface], { onRequest: deps.onRequest, config: { surface: endpoint.surface } }, (request, reply) =>
    runAnswer(deps.services, request, reply, endpoint.surface, (lifecycle) => serve(endpoint, deps.services, lifecycle, request, reply)),
  );
}

async function serve<Request extends { model: string }>(
  endpoint: WholeEndpoint<Request>,
  services: AnswerServices,
  lifecycle: AnswerLifecycle,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  const context = requireContext(request);
  const body = parseJsonBody(request.body) as Record<string, unknown>;
  const decoded = endpoint.decode(body);
  if (services.catalog.get(decoded.model) !== undefined) lifecycle.begin(context, endpoint.surface, decoded.model, false);
  const model = requireEndpoint(resolveModel(services, decoded.model, context), endpoint.surface);
  const inputTokenBound = endpoint.inputBound?.(decoded) ?? (await runYielding(walkInputBound(body, { imageTokens: services.billing.inputBound(model.id).imageTokens })));
  await limitTokens(services.limiter, request, reply, inputTokenBound);
  const meter = new UsageMeter(endpoint.countInput(decoded), 0);
  await lifecycle.reserve(context, { model: model.id, inputTokenBound, maxOutputTokens: 0 }, meter);
  // Nobody to answer: the hold is released now rather than at its expiry.
  if (lifecycle.aborted) return reply.code(499).send();

  const route = { model, requestId: request.id, stream: false, signal: lifecycle.signal, onTargetFailed: (target: Target) => lifecycle.targetFailed(target) };
  const { target, result } = await services.router.call(route, (target) => endpoint.call(target, decoded, body, lifecycle.signal, request.id), endpoint.serves);
  lifecycle.routed(target);
  if (result.reportedInputTokens !== undefined) {
    meter.observe({ type: 'usage', usage: { inputTokens: result.reportedInputTokens, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 } });
  }
  const usage = await meter.usage();
  lifecycle.firstByte();
  const binary = result.binary;
  if (binary !== undefined) {
    // Billed before the first byte (the bill is known whole: what the request measured), then the
    // audio goes out as it comes; a client that leaves destroys it, which stops the upstream call.
    return lifecycle.conclude(
      () => undefined,
      () => reply.header('content-type', binary.contentType).send(binary.stream),
    );
  }
  const answer = endpoint.answer(result, decoded, usage);
  return lifecycle.conclude(
    () => undefined,
    () => reply.send(answer),
  );
}
