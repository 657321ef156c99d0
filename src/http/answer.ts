/**
 * The one handler behind both creation endpoints: decode → model → token limit → hold → route →
 * stream or JSON → settle. The hold is settled exactly once, on every path, with the usage seen so
 * far; a client that goes away aborts the upstream call.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Logger } from 'pino';
import type { BillingService, Hold } from '../billing/billing-service.js';
import { UsageMeter } from '../billing/usage-meter.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { CanonicalEvent, Usage } from '../protocol/canonical.js';
import { estimateInputTokens } from '../protocol/tokens.js';
import type { PassthroughFrame } from '../providers/provider.js';
import type { Limiter } from '../ratelimit/limiter.js';
import type { Catalog, ModelEntry } from '../routing/catalog.js';
import type { OpenedAnswer, Router } from '../routing/router.js';
import type { ApiContext } from './api-context.js';
import { limitTokens, requireContext } from './api-hooks.js';
import { parseJsonBody } from './body.js';
import type { ClientEncoder, SurfaceAdapter } from './surfaces.js';

export interface AnswerServices {
  catalog: Catalog;
  router: Router;
  billing: BillingService;
  limiter: Limiter;
  logger: Logger;
  now: () => number;
}

/** The model a key may use right now, or the spec's 503. */
export function resolveModel(services: Pick<AnswerServices, 'catalog' | 'router'>, modelId: string, context: ApiContext): ModelEntry {
  const model = services.catalog.get(modelId);
  const allowed = context.key.models === null || context.key.models.includes(modelId);
  if (model === undefined || !model.enabled || !allowed || !services.router.hasUsableTarget(model)) {
    throw new GatewayError('model_unavailable');
  }
  return model;
}

export function createAnswerHandler(adapter: SurfaceAdapter, services: AnswerServices): RouteHandlerMethod {
  return async function answer(request: FastifyRequest, reply: FastifyReply) {
    const context = requireContext(request);
    const body = parseJsonBody(request.body);
    const decoded = adapter.decode(body);
    const model = resolveModel(services, decoded.request.model, context);
    adapter.checkAgainstModel(decoded, model);
    const estimatedInputTokens = estimateInputTokens(decoded.request);
    const maxOutputTokens = Math.min(decoded.request.maxOutputTokens ?? model.maxOutputTokens, model.maxOutputTokens);
    await limitTokens(services.limiter, request, reply, estimatedInputTokens + maxOutputTokens);
    const hold = await services.billing.reserve({
      accountId: context.account.id,
      keyId: context.key.id,
      requestId: request.id,
      model: model.id,
      estimatedInputTokens,
      maxOutputTokens,
    });
    const settle = createSettler(services, hold, request);
    const abort = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });

    let opened: OpenedAnswer;
    try {
      opened = await services.router.open({
        model,
        surface: adapter.surface,
        request: decoded.request,
        // The decoder accepted it, so it is a JSON object.
        body: body as Record<string, unknown>,
        clientWantsUsage: decoded.clientWantsUsage,
        maxOutputTokens,
        signal: abort.signal,
        requestId: request.id,
      });
    } catch (error) {
      await settle(null);
      throw error;
    }

    const meter = new UsageMeter(estimatedInputTokens);
    const encoder = adapter.createEncoder(decoded, Math.floor(services.now() / 1000));
    if (decoded.request.stream) {
      const frames = streamFrames(opened, encoder, meter, abort, settle);
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(Readable.from(frames, { objectMode: false }));
    }
    return reply.send(await collectAnswer(opened, encoder, meter, settle));
  };
}

type Settle = (usage: Usage | null) => Promise<void>;

function createSettler(services: AnswerServices, hold: Hold, request: FastifyRequest): Settle {
  let settled = false;
  return async (usage) => {
    if (settled) return;
    settled = true;
    try {
      const cost = await services.billing.settle(hold, usage);
      request.log.info({ model: hold.model, keyId: hold.keyId, usage, costNanos: cost.toString() }, 'settled');
    } catch (error) {
      // The hold stays open and expires; the failure is the operator's to see, not the client's.
      request.log.error({ err: error, holdId: hold.id }, 'settling the hold failed');
    }
  };
}

function usageToBill(meter: UsageMeter): Usage | null {
  return meter.producedAnything ? meter.usage() : null;
}

async function collectAnswer(
  opened: OpenedAnswer,
  encoder: ClientEncoder,
  meter: UsageMeter,
  settle: Settle,
): Promise<Record<string, unknown>> {
  let failure: Extract<CanonicalEvent, { type: 'error' }> | undefined;
  try {
    if (opened.kind === 'passthrough') {
      if (opened.result.kind === 'json') {
        for (const event of opened.result.events) meter.observe(event);
        return opened.result.body;
      }
      // An upstream that streams although asked not to: meter the frames, answer from the events.
      for await (const frame of opened.result.frames) for (const event of frame.events) failure ??= observe(meter, encoder, event);
    } else {
      failure = observe(meter, encoder, opened.first);
      if (failure === undefined) {
        for await (const event of iterate(opened.rest)) {
          failure = observe(meter, encoder, event);
          if (failure !== undefined) break;
        }
      }
    }
    if (failure !== undefined) throw new GatewayError('upstream_error');
    const usage = meter.usage();
    encoder.finish(usage);
    return encoder.body(usage);
  } catch (error) {
    throw error instanceof GatewayError ? error : new GatewayError('upstream_error', { cause: error });
  } finally {
    await settle(usageToBill(meter));
  }
}

/** Feeds one event to the meter and the encoder; returns it when it is a failure. */
function observe(meter: UsageMeter, encoder: ClientEncoder, event: CanonicalEvent): Extract<CanonicalEvent, { type: 'error' }> | undefined {
  meter.observe(event);
  if (event.type === 'error') return event;
  encoder.push(event);
  return undefined;
}

async function* streamFrames(
  opened: OpenedAnswer,
  encoder: ClientEncoder,
  meter: UsageMeter,
  abort: AbortController,
  settle: Settle,
): AsyncGenerator<string> {
  let finished = false;
  try {
    const frames = opened.kind === 'passthrough' ? passthroughFrames(opened, meter) : canonicalFrames(opened, encoder, meter, abort.signal);
    for await (const text of frames) if (text !== '') yield text;
    finished = true;
  } catch {
    // A provider that throws mid-stream (rather than yielding an error event) still ends the
    // stream in the client's protocol.
    if (!abort.signal.aborted) yield encoder.fail('upstream_error', 'The upstream provider failed mid-stream.', meter.usage()).join('');
  } finally {
    if (!finished) abort.abort();
    await settle(usageToBill(meter));
  }
}

async function* canonicalFrames(
  opened: Extract<OpenedAnswer, { kind: 'events' }>,
  encoder: ClientEncoder,
  meter: UsageMeter,
  signal: AbortSignal,
): AsyncGenerator<string> {
  yield encoder.start().join('');
  meter.observe(opened.first);
  yield encoder.push(opened.first).join('');
  for await (const event of iterate(opened.rest)) {
    meter.observe(event);
    if (event.type === 'error') {
      yield encoder.fail(event.code, event.message, meter.usage()).join('');
      return;
    }
    yield encoder.push(event).join('');
  }
  if (signal.aborted) return;
  yield encoder.finish(meter.usage()).join('');
}

async function* passthroughFrames(opened: Extract<OpenedAnswer, { kind: 'passthrough' }>, meter: UsageMeter): AsyncGenerator<string> {
  const result = opened.result;
  if (result.kind === 'json') {
    for (const event of result.events) meter.observe(event);
    yield `data: ${JSON.stringify(result.body)}\n\n`;
    return;
  }
  for await (const frame of result.frames as AsyncIterable<PassthroughFrame>) {
    for (const event of frame.events) meter.observe(event);
    yield frame.sse;
  }
}

function iterate<T>(iterator: AsyncIterator<T>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => iterator };
}
