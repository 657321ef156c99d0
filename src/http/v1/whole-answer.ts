/**
 * The handler of the endpoints whose answer is not a stream of canonical events (embeddings,
 * moderations, images, transcriptions: JSON, or their own server-sent events; speech: audio
 * streamed as it arrives), for a JSON body or a multipart upload (upload.ts): the same lifecycle
 * as the generative endpoints (answer-lifecycle.ts): decode → model (it must serve the endpoint)
 * → token limit → hold → route (failing over before an answer) → settle → send. The hold is the
 * bound of the input tokens at the input price, plus the output the endpoint allows, plus the
 * units it bills each (images asked for, the file's duration, characters: billing/prices.ts);
 * the bill is what the upstream reported when sane, else the gateway's own count and measure.
 * Each endpoint says how, in a `WholeEndpoint`.
 */
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { ModelPrices } from '../../billing/prices.js';
import { UsageMeter, type InputCount } from '../../billing/usage-meter.js';
import type { ConfigFile } from '../../config/schema.js';
import { runYielding } from '../../lib/run-yielding.js';
import { SURFACE_PATHS, type PricedUnits, type Surface, type UploadSurface, type Usage } from '../../protocol/canonical.js';
import { walkInputBound } from '../../protocol/input-bound.js';
import type { ModelEntry, Target } from '../../routing/catalog.js';
import { parseJsonBody } from '../body.js';
import { resolveModel, type AnswerServices } from './answer.js';
import { runAnswer, type AnswerLifecycle } from './answer-lifecycle.js';
import { limitTokens, requireContext } from './api-hooks.js';
import { requireEndpoint } from './models-route.js';
import { readUpload, type UploadFields } from './upload.js';
import { observeReport, sendWholeStream, type WholeFrame } from './whole-stream.js';

/** The body of a request: JSON, or a multipart upload (upload.ts). */
export type WholeBody = { readonly kind: 'json'; readonly json: Readonly<Record<string, unknown>> } | { readonly kind: 'upload'; readonly fields: UploadFields };

/**
 * What a target answered: the body in the client's wire format and what the upstream reported of
 * its use (input tokens, or a whole usage; the units it billed, which replace those the request
 * measured); or a binary answer (speech) to stream as it arrives; or server-sent events (images
 * and transcriptions with `stream: true`), the last of which carries the report.
 */
export interface WholeResult {
  body: Record<string, unknown>;
  reportedInputTokens?: number;
  reportedUsage?: Usage;
  units?: PricedUnits;
  binary?: { contentType: string; stream: Readable };
  events?: AsyncIterable<WholeFrame>;
}

/** What the hold covers beyond the input tokens, from the request and the model's prices. */
export interface WholeHold {
  /** Output tokens the upstream may bill (images billed by tokens); 0 by default. */
  maxOutputTokens?: number;
  /** Units billed each (images, audio, characters), also billed when the upstream reports none. */
  units?: PricedUnits;
}

export interface WholeEndpoint<Request extends { model: string }> {
  surface: Surface;
  /** For an upload endpoint: its body is multipart, bounded by `limits.max_upload_bytes` of this name. */
  upload?: UploadSurface;
  /** The request, or the 400 (InvalidRequestError) OpenAI would answer. */
  decode(body: WholeBody): Request | Promise<Request>;
  /** The gateway's exact count of the input, run only when the upstream reports none. */
  countInput(request: Request): InputCount;
  /**
   * What the hold covers of the input, when the endpoint knows it (speech: nothing; uploads: their
   * text fields); by default the bound of the whole JSON body (protocol/input-bound.ts).
   */
  inputBound?(request: Request, model: ModelEntry, imageTokens: number, prices: ModelPrices): number;
  /** What else the hold covers (see WholeHold), or the 400 for a request the model has no price for. */
  hold?(request: Request, prices: ModelPrices, model: ModelEntry): WholeHold;
  /** Whether a target's provider can serve the endpoint (the catalog checks it at startup). */
  serves(target: Target): boolean;
  /**
   * One call on one target; resolves once it answered 200 with a readable answer. `prices` are the
   * model's, for an endpoint whose units are priced by what the answer says (images: the tier made).
   */
  call(target: Target, request: Request, body: WholeBody, signal: AbortSignal, requestId: string, prices: ModelPrices): Promise<WholeResult>;
  /** The JSON body sent to the client, given the usage billed (a binary or streamed answer is sent as it is). */
  answer(result: WholeResult, request: Request, usage: Usage): Record<string, unknown>;
}

/** The JSON of a JSON endpoint's body (an upload endpoint never asks). */
export function jsonOf(body: WholeBody): Readonly<Record<string, unknown>> {
  if (body.kind !== 'json') throw new Error('a JSON endpoint was given an upload');
  return body.json;
}

export interface WholeRouteDeps {
  onRequest: onRequestAsyncHookHandler[];
  services: AnswerServices;
  /** The upload endpoints' body limits (`limits.max_upload_bytes`). */
  uploadLimits: ConfigFile['limits']['max_upload_bytes'];
}

export function registerWholeRoute<Request extends { model: string }>(app: FastifyInstance, endpoint: WholeEndpoint<Request>, deps: WholeRouteDeps): void {
  app.post(SURFACE_PATHS[endpoint.surface], { onRequest: deps.onRequest, config: { surface: endpoint.surface } }, (request, reply) =>
    runAnswer(deps.services, request, reply, endpoint.surface, (lifecycle) => serve(endpoint, deps, lifecycle, request, reply)),
  );
}

async function readBody(endpoint: WholeEndpoint<{ model: string }>, deps: WholeRouteDeps, request: FastifyRequest): Promise<WholeBody> {
  if (endpoint.upload !== undefined) return { kind: 'upload', fields: await readUpload(request, deps.uploadLimits[endpoint.upload]) };
  return { kind: 'json', json: parseJsonBody(request.body) as Record<string, unknown> };
}

async function serve<Request extends { model: string }>(
  endpoint: WholeEndpoint<Request>,
  deps: WholeRouteDeps,
  lifecycle: AnswerLifecycle,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  const services = deps.services;
  const context = requireContext(request);
  const body = await readBody(endpoint, deps, request);
  const decoded = await endpoint.decode(body);
  if (services.catalog.get(decoded.model) !== undefined) lifecycle.begin(context, endpoint.surface, decoded.model, false);
  const model = requireEndpoint(resolveModel(services, decoded.model, context), endpoint.surface);
  const imageTokens = services.billing.inputBound(model.id).imageTokens;
  const prices = services.billing.pricesOf(model.id);
  const inputTokenBound =
    endpoint.inputBound?.(decoded, model, imageTokens, prices) ?? (body.kind === 'json' ? await runYielding(walkInputBound(body.json, { imageTokens })) : 0);
  const held = endpoint.hold?.(decoded, prices, model) ?? {};
  const maxOutputTokens = held.maxOutputTokens ?? 0;
  await limitTokens(services.limiter, request, reply, inputTokenBound + maxOutputTokens);
  const meter = new UsageMeter(endpoint.countInput(decoded), maxOutputTokens);
  if (held.units !== undefined) meter.billUnits(held.units);
  await lifecycle.reserve(context, { model: model.id, inputTokenBound, maxOutputTokens, ...(held.units === undefined ? {} : { units: held.units }) }, meter);
  // Nobody to answer: the hold is released now rather than at its expiry.
  if (lifecycle.aborted) return reply.code(499).send();

  const route = { model, requestId: request.id, stream: false, signal: lifecycle.signal, onTargetFailed: (target: Target) => lifecycle.targetFailed(target) };
  const { target, result } = await services.router.call(route, (target) => endpoint.call(target, decoded, body, lifecycle.signal, request.id, prices), endpoint.serves);
  lifecycle.routed(target);
  if (result.events !== undefined) return sendWholeStream(result.events, meter, lifecycle, reply);
  observeReport(meter, result);
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
