/**
 * The one handler behind the creation endpoints: decode → model → the surface's preparation → token
 * limit → hold → route → stream or JSON. It knows no surface by name: what differs is behind the
 * surface's adapter (surfaces/surface.ts). What must end exactly once (the abort signal, the hold,
 * its settlement) belongs to the answer's lifecycle (answer-lifecycle.ts), which also ends every
 * answer (`conclude`: settled, and kept when the surface keeps it, before the last bytes); streams
 * go out through answer-stream.ts.
 */
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { UsageMeter, type InputCount } from '../../billing/usage-meter.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { runYielding } from '../../lib/run-yielding.js';
import type { CanonicalRequest } from '../../protocol/canonical.js';
import type { CanonicalEvents } from '../../providers/provider.js';
import { walkInputBound } from '../../protocol/input-bound.js';
import { countInputTokens, estimateInputTokens } from '../../protocol/tokens.js';
import type { Limiter } from '../../ratelimit/limiter.js';
import type { Catalog, ModelEntry } from '../../routing/catalog.js';
import type { OpenedAnswer, Router } from '../../routing/router.js';
import type { ApiContext } from './api-context.js';
import { limitTokens, requireContext } from './api-hooks.js';
import { modelForKey, requireEndpoint } from './models-route.js';
import { runAnswer, type AnswerLifecycle, type LifecycleServices } from './answer-lifecycle.js';
import { deliverStream, type DeliveryParts } from './answer-stream.js';
import { parseJsonBody } from '../body.js';
import type { ClientEncoder, Decoded, Prepared, SurfaceAdapter } from './surfaces/surface.js';

export interface AnswerServices extends LifecycleServices {
  catalog: Catalog;
  router: Router;
  limiter: Limiter;
}

/** The model a key may use right now, or the spec's 503. */
export function resolveModel(services: Pick<AnswerServices, 'catalog' | 'router'>, modelId: string, context: ApiContext): ModelEntry {
  const model = modelForKey(services.catalog, services.router, context.key.models, modelId);
  if (model === undefined) throw new GatewayError('model_unavailable');
  return model;
}

export function createAnswerHandler<Extras>(adapter: SurfaceAdapter<Extras>, services: AnswerServices): RouteHandlerMethod {
  return function answer(request: FastifyRequest, reply: FastifyReply) {
    return runAnswer(services, request, reply, adapter.surface, (lifecycle) => serve(adapter, services, lifecycle, request, reply));
  };
}

async function serve<Extras>(adapter: SurfaceAdapter<Extras>, services: AnswerServices, lifecycle: AnswerLifecycle, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const context = requireContext(request);
  const body = parseJsonBody(request.body);
  const decodedBody = adapter.decode(body, request.headers);
  const requested = decodedBody.request.model;
  // A catalog model has an outcome from here on, so that its refusal (disabled, not allowed for the
  // key, no target in rotation) is logged and measured with it; a made-up name never is.
  if (services.catalog.get(requested) !== undefined) lifecycle.begin(context, adapter.surface, requested, decodedBody.request.stream);
  const model = requireEndpoint(resolveModel(services, requested, context), adapter.surface);
  const checked = adapter.checkAgainstModel(decodedBody, model);
  // Before the estimate, so that the hold covers everything the upstream will read.
  const prepared = adapter.prepare === undefined ? asChecked(checked) : await adapter.prepare(checked, { accountId: context.account.id, log: request.log });
  const decoded = prepared.decoded;
  lifecycle.keepWith(prepared.keep);
  const maxOutputTokens = Math.min(decoded.request.maxOutputTokens ?? model.maxOutputTokens, model.maxOutputTokens);
  // The hold covers every byte the upstream may read: the whole client body (what a pass-through
  // forwards), plus what the surface's preparation added (the earlier turns of a conversation).
  // Counted in slices so that a large body never holds the event loop (docs/architecture.md, Money).
  // The body a pass-through forwards: the client's, or the surface's rewriting of it.
  const forwarded = decoded.body ?? (body as Record<string, unknown>);
  const imageTokens = services.billing.inputBound(model.id).imageTokens;
  let inputTokenBound = await runYielding(walkInputBound(forwarded, { imageTokens }));
  // The added turns, bounded like the body (beyond the first 64 KiB of text, by their bytes).
  if (prepared.expanded) inputTokenBound += estimateInputTokens(decoded.request);
  inputTokenBound += prepared.addedInputTokens ?? 0;
  await limitTokens(services.limiter, request, reply, inputTokenBound + maxOutputTokens);
  const meter = new UsageMeter(inputCount(decoded.request), maxOutputTokens);
  await lifecycle.reserve(context, { model: model.id, inputTokenBound, maxOutputTokens }, meter);
  // Nobody to answer: the hold is released now rather than at its expiry. 499 is the usual
  // "client closed request"; it reaches only the logs and metrics.
  if (lifecycle.aborted) return reply.code(499).send();

  const upstreamHeaders = adapter.upstreamHeaders?.(decoded);
  const open = <Stream extends boolean>(canonical: CanonicalRequest & { readonly stream: Stream }): Promise<OpenedAnswer<Stream>> =>
    services.router.open({
      model,
      surface: adapter.surface,
      request: canonical,
      // The decoder accepted it, so it is a JSON object.
      body: forwarded,
      ...(adapter.passthroughEndpoint === undefined ? {} : { passthroughEndpoint: adapter.passthroughEndpoint }),
      clientWantsUsage: decoded.clientWantsUsage,
      maxOutputTokens,
      signal: lifecycle.signal,
      requestId: request.id,
      onTargetFailed: (target) => lifecycle.targetFailed(target),
      // The client's body names what only the gateway knows; the upstream gets the expanded request.
      canonicalOnly: prepared.expanded,
      ...(upstreamHeaders === undefined ? {} : { upstreamHeaders }),
    });
  /** What the opened answer is delivered with (an encoder only for a translated route: a pass-through needs none). */
  const deliveryParts = (opened: OpenedAnswer, canonical: CanonicalRequest): DeliveryParts => {
    lifecycle.routed(opened.target);
    reply.headers(droppedToolsHeaders(opened, canonical));
    const createEncoder = () => adapter.createEncoder(decoded, Math.floor(services.now() / 1000));
    return { createEncoder, adapter };
  };

  const delivery = byStreamFlag(decoded.request);
  if (delivery.stream) {
    const opened = await open(delivery.request);
    const parts = deliveryParts(opened, delivery.request);
    // Returned, not awaited: the handler waits for the stream, and this function's frame (with the
    // whole request it decoded) is not kept while the stream runs.
    return deliverStream(reply, opened, { lifecycle, meter, ...parts });
  }
  const opened = await open(delivery.request);
  const answer = await collectAnswer(opened, meter, lifecycle, deliveryParts(opened, delivery.request));
  lifecycle.firstByte();
  // A pass-through's text goes out as the upstream wrote it; Fastify sends a string with a JSON type as is.
  if (typeof answer === 'string') reply.header('content-type', JSON_CONTENT_TYPE);
  return reply.send(answer);
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The gateway's exact count of the input, as the work the usage meter runs if it needs it (most
 * answers carry a sane report and never do). Made here, it keeps the canonical request alone, not
 * the handler's whole scope, for as long as the answer runs.
 */
function inputCount(request: CanonicalRequest): InputCount {
  return () => countInputTokens(request);
}

/** The request with its stream flag as a type, so that the router's answer is typed by it. */
function byStreamFlag(request: CanonicalRequest): { stream: true; request: CanonicalRequest & { stream: true } } | { stream: false; request: CanonicalRequest & { stream: false } } {
  return request.stream ? { stream: true, request: { ...request, stream: true } } : { stream: false, request: { ...request, stream: false } };
}

/**
 * A whole (non-streamed) answer, concluded (settled, and kept if the surface keeps it) before it is
 * sent: an object to serialize, or a pass-through's JSON text to send as is.
 */
async function collectAnswer(opened: OpenedAnswer<false>, meter: UsageMeter, lifecycle: AnswerLifecycle, { createEncoder, adapter }: DeliveryParts): Promise<Record<string, unknown> | string> {
  if (opened.kind === 'passthrough') {
    const { body, text, events } = opened.result;
    for (const event of events) meter.observe(event);
    // A response object that says it failed (status `failed`) goes out as the upstream sent it.
    const failure = events.find((event) => event.type === 'error');
    if (failure !== undefined) lifecycle.failed('upstream_error', failure.upstreamCode);
    return lifecycle.conclude(
      () => adapter.passthroughResponse?.(body),
      () => text ?? body,
    );
  }
  const encoder = createEncoder();
  meter.observe(opened.first);
  encoder.push(opened.first);
  await encodeWhole(opened.rest, meter, encoder);
  const usage = await meter.usage();
  encoder.finish(usage);
  const body = encoder.body(usage);
  return lifecycle.conclude(
    () => body,
    () => body,
  );
}

/** A surface without a preparation: the request as checked, nothing added, nothing kept. */
function asChecked<Extras>(decoded: Decoded<Extras>): Prepared<Extras> {
  return { decoded, expanded: false };
}

/** The response header naming the hosted tools the chosen route left out (none on pass-through). */
export const DROPPED_TOOLS_HEADER = 'x-tollgate-dropped-tools';

function droppedToolsHeaders(opened: OpenedAnswer, request: CanonicalRequest): Record<string, string> {
  if (opened.kind === 'passthrough') return {};
  const provider = opened.target.provider;
  const dropped = (request.hostedTools ?? []).filter((tool) => provider.keepsHostedTool?.(tool, request) !== true).map((tool) => tool.type);
  return dropped.length === 0 ? {} : { [DROPPED_TOOLS_HEADER]: [...new Set(dropped)].join(',') };
}

/**
 * Feeds a whole answer's events to the meter and the encoder as the provider's reader hands them
 * over (one loop, no promise per event); resolves at `finish`. A failure, or a body over without
 * `finish`, rejects with `upstream_error`, and so does a throw of the encoder (never out of the
 * body's `data` handler).
 */
function encodeWhole(rest: CanonicalEvents, meter: UsageMeter, encoder: ClientEncoder): Promise<void> {
  return new Promise((resolve, reject) => {
    let over = false;
    const fail = (cause?: unknown): void => {
      over = true;
      reject(new GatewayError('upstream_error', cause === undefined ? {} : { cause }));
    };
    rest.start({
      events(events) {
        if (over) return;
        try {
          for (const event of events) {
            meter.observe(event);
            if (event.type === 'error') {
              rest.release();
              return fail();
            }
            encoder.push(event);
            if (event.type === 'finish') {
              over = true;
              return resolve();
            }
          }
        } catch (error) {
          rest.release();
          fail(error);
        }
      },
      closed() {
        if (!over) fail();
      },
    });
  });
}
