/**
 * The one handler behind both creation endpoints: decode → model → expand `previous_response_id`
 * → token limit → hold → route → stream or JSON → store → settle. The hold is settled exactly once,
 * on every path, with the usage seen so far; a client that goes away aborts the upstream call. A
 * stored answer (Responses `store`) is saved before its final event or JSON body is sent.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Logger } from 'pino';
import type { BillingService, Hold } from '../billing/billing-service.js';
import type { HoldKeeper } from '../billing/hold-keeper.js';
import type { SettleRetrier } from '../billing/settle-retry.js';
import { UsageMeter } from '../billing/usage-meter.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { CanonicalEvent, CanonicalRequest, Usage } from '../protocol/canonical.js';
import { walkInputBound } from '../protocol/input-bound.js';
import { estimateInputTokens } from '../protocol/tokens.js';
import type { Limiter } from '../ratelimit/limiter.js';
import type { Catalog, ModelEntry } from '../routing/catalog.js';
import type { OpenedAnswer, Router } from '../routing/router.js';
import type { Store } from '../store/store.js';
import type { ApiContext } from './api-context.js';
import { limitTokens, requireContext } from './api-hooks.js';
import { parseJsonBody } from './body.js';
import { createResponseKeeper, expandConversation, KEEP_NOTHING, passthroughResponse, type KeepResponse } from './stored-responses.js';
import type { InFlight } from './in-flight.js';
import type { Metrics } from './metrics.js';
import type { RequestOutcome } from './request-outcome.js';
import { runYielding } from './run-yielding.js';
import { droppedToolsHeaders, type ClientEncoder, type SurfaceAdapter } from './surfaces.js';

export interface AnswerServices {
  /** Answers whose bill is not settled yet (a drain waits for them). */
  inFlight: InFlight;
  /** Takes over settlements that failed (database briefly away); they never bill twice. */
  settleRetrier: SettleRetrier;
  catalog: Catalog;
  router: Router;
  billing: BillingService;
  /** Keeps running requests' holds alive and checkpoints their metered usage. */
  holdKeeper: HoldKeeper;
  metrics: Pick<Metrics, 'billingExcess' | 'rejectedUsageReports'>;
  limiter: Limiter;
  /** Stored responses (Responses `store` and `previous_response_id`). */
  store: Store;
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
    // First, so that a client gone at any later step is noticed (and its hold released).
    const abort = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const context = requireContext(request);
    const body = parseJsonBody(request.body);
    const decodedBody = adapter.decode(body, request.headers);
    const model = resolveModel(services, decodedBody.request.model, context);
    // Minimal outcome for the request log until the answer handler's own rewrite fills it fully.
    const outcome: RequestOutcome = { accountId: context.account.id, keyId: context.key.id, surface: adapter.surface, model: model.id, target: null, stream: decodedBody.request.stream, firstByteAt: null, usage: null, costNanos: 0n, errorCode: null };
    request.outcome = outcome;
    adapter.checkAgainstModel(decodedBody, model);
    // Before the estimate, so that the hold covers the whole conversation the upstream will read.
    const conversation = await expandConversation(services.store, context.account.id, decodedBody);
    const decoded = conversation.decoded;
    const maxOutputTokens = Math.min(decoded.request.maxOutputTokens ?? model.maxOutputTokens, model.maxOutputTokens);
    // The hold covers every byte the upstream may read: the whole client body (what a pass-through
    // forwards), plus the stored turns a `previous_response_id` brings in. Counted in slices so that
    // a large body never holds the event loop (docs/architecture.md, Money).
    const imageTokens = services.billing.inputBound(model.id).imageTokens;
    let inputTokenBound = await runYielding(walkInputBound(body, { imageTokens }));
    // The gateway's own count of the input, billed only when the upstream reports no sane usage.
    const estimateInput = () => estimateInputTokens(decoded.request);
    if (decoded.previousResponseId !== null) inputTokenBound += estimateInput();
    await limitTokens(services.limiter, request, reply, inputTokenBound + maxOutputTokens);
    const openedAt = services.now();
    const hold = await services.billing.reserve({
      accountId: context.account.id,
      keyId: context.key.id,
      requestId: request.id,
      model: model.id,
      inputTokenBound,
      maxOutputTokens,
    });
    const meter = new UsageMeter(estimateInput, maxOutputTokens);
    const settle = createSettler(services, hold, meter, request, openedAt);
    if (abort.signal.aborted) {
      // Nobody to answer: release the hold now rather than at its expiry. 499 is the usual
      // "client closed request"; it reaches only the logs and metrics.
      await settle(null);
      return reply.code(499).send();
    }

    const openAnswer = async <Stream extends boolean>(canonical: CanonicalRequest & { readonly stream: Stream }): Promise<Answer<Stream>> => {
      let opened: OpenedAnswer<Stream>;
      try {
        opened = await services.router.open({
          model,
          surface: adapter.surface,
          request: canonical,
          // The decoder accepted it, so it is a JSON object.
          body: body as Record<string, unknown>,
          clientWantsUsage: decoded.clientWantsUsage,
          maxOutputTokens,
          signal: abort.signal,
          requestId: request.id,
          // The client's body names a response only the gateway knows; the upstream gets the expanded request.
          canonicalOnly: decoded.previousResponseId !== null,
          ...(decoded.upstreamHeaders === undefined ? {} : { upstreamHeaders: decoded.upstreamHeaders }),
        });
      } catch (error) {
        await settle(null);
        throw error;
      }

      outcome.target = opened.target.label;
      reply.headers(droppedToolsHeaders(opened, canonical));
      try {
        const encoder = adapter.createEncoder(decoded, Math.floor(services.now() / 1000));
        const keep = decoded.store
          ? createResponseKeeper({ store: services.store, accountId: context.account.id, inputItems: conversation.inputItems, now: services.now, log: request.log })
          : KEEP_NOTHING;
        return { opened, encoder, meter, settle, keep };
      } catch (error) {
        // Until the stream or the collector owns the answer, this handler settles it.
        abort.abort();
        await settle(null);
        throw error;
      }
    };

    const delivery = byStreamFlag(decoded.request);
    if (delivery.stream) {
      const answer = await openAnswer(delivery.request);
      const frames = withTeardown(streamFrames(answer, abort, outcome, services.now), () => {
        // Runs when the stream is destroyed, even before it started (then the generator's own
        // `finally` never runs): stop the upstream and settle, both no-ops if already done.
        abort.abort();
        return settle(usageToBill(meter));
      });
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(Readable.from(frames, { objectMode: false }));
    }
    const collected = await collectAnswer(await openAnswer(delivery.request));
    outcome.firstByteAt = services.now();
    return reply.send(collected);
  };
}

/** The request with its stream flag as a type, so that the router's answer is typed by it. */
function byStreamFlag(request: CanonicalRequest): { stream: true; request: CanonicalRequest & { stream: true } } | { stream: false; request: CanonicalRequest & { stream: false } } {
  return request.stream ? { stream: true, request: { ...request, stream: true } } : { stream: false, request: { ...request, stream: false } };
}

type Settle = (usage: Usage | null) => Promise<void>;

/** One opened answer and what it is delivered through; `Stream` is the request's stream flag. */
interface Answer<Stream extends boolean = boolean> {
  opened: OpenedAnswer<Stream>;
  encoder: ClientEncoder;
  meter: UsageMeter;
  settle: Settle;
  /** Saves the final response object (a no-op unless the request is stored). */
  keep: KeepResponse;
}

function createSettler(services: AnswerServices, hold: Hold, meter: UsageMeter, request: FastifyRequest, openedAt: number): Settle {
  let settled = false;
  const end = services.inFlight.begin();
  const stopKeeping = services.holdKeeper.track(hold, () => meter.metered());
  return async (usage) => {
    if (settled) return;
    settled = true;
    stopKeeping();
    if (meter.rejectedReport) {
      services.metrics.rejectedUsageReports.inc({ model: hold.model });
      request.log.warn({ model: hold.model, holdId: hold.id }, 'the upstream reported usage that fails the sanity check; billing the metered count');
    }
    try {
      const { billedNanos, excessNanos } = await services.billing.settle(hold, usage);
      if (request.outcome !== null) Object.assign(request.outcome, { usage, costNanos: billedNanos });
      if (excessNanos > 0n) {
        services.metrics.billingExcess.inc({ model: hold.model }, Number(excessNanos));
        request.log.warn({ model: hold.model, holdId: hold.id, excessNanos: excessNanos.toString() }, 'the upstream reported more than the hold covers; the excess is recorded, not billed');
      }
      request.log.info({ model: hold.model, keyId: hold.keyId, usage, costNanos: billedNanos.toString() }, 'settled');
    } catch (error) {
      // Not the client's problem: the retrier settles it once the database answers again.
      request.log.error({ err: error, holdId: hold.id }, 'settling the hold failed; retrying in the background');
      services.settleRetrier.retry(hold, usage, openedAt);
    } finally {
      end();
    }
  };
}

function usageToBill(meter: UsageMeter): Usage | null {
  return meter.producedAnything ? meter.usage() : null;
}

async function collectAnswer({ opened, encoder, meter, settle, keep }: Answer<false>): Promise<Record<string, unknown>> {
  try {
    if (opened.kind === 'passthrough') {
      for (const event of opened.result.events) meter.observe(event);
      const response = passthroughResponse(opened.result.body);
      if (response !== undefined) await keep(response);
      return opened.result.body;
    }
    let failure = observe(meter, encoder, opened.first);
    if (failure === undefined) {
      for await (const event of iterate(opened.rest)) {
        failure = observe(meter, encoder, event);
        if (failure !== undefined) break;
      }
    }
    if (failure !== undefined) throw new GatewayError('upstream_error');
    const usage = meter.usage();
    encoder.finish(usage);
    const body = encoder.body(usage);
    await keep(body);
    return body;
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

async function* streamFrames(answer: Answer<true>, abort: AbortController, outcome: RequestOutcome, now: () => number): AsyncGenerator<string> {
  const { opened, encoder, meter, settle } = answer;
  let finished = false;
  try {
    const frames = opened.kind === 'passthrough' ? passthroughFrames(opened, meter, answer.keep) : canonicalFrames(opened, answer, abort.signal, outcome);
    for await (const text of frames) {
      if (text === '') continue;
      outcome.firstByteAt ??= now();
      yield text;
    }
    finished = true;
  } catch {
    // A provider that throws mid-stream (rather than yielding an error event) still ends the
    // stream in the client's protocol.
    outcome.errorCode = 'upstream_error';
    if (!abort.signal.aborted) yield await finalFrames(answer, encoder.fail('upstream_error', 'The upstream provider failed mid-stream.', meter.usage()));
  } finally {
    if (!finished) abort.abort();
    await settle(usageToBill(meter));
  }
}

async function* canonicalFrames(opened: Extract<OpenedAnswer, { kind: 'events' }>, answer: Answer<true>, signal: AbortSignal, outcome: RequestOutcome): AsyncGenerator<string> {
  const { encoder, meter } = answer;
  yield encoder.start().join('');
  meter.observe(opened.first);
  yield encoder.push(opened.first).join('');
  for await (const event of iterate(opened.rest)) {
    meter.observe(event);
    if (event.type === 'error') {
      outcome.errorCode = 'upstream_error';
      yield await finalFrames(answer, encoder.fail(event.code, event.message, meter.usage()));
      return;
    }
    yield encoder.push(event).join('');
  }
  if (signal.aborted) return;
  yield await finalFrames(answer, encoder.finish(meter.usage()));
}

/**
 * The frames that end the stream (`response.completed`, `.incomplete` or `.failed`), held back until
 * the response they carry is stored, so a client that reads it right after the stream finds it.
 */
async function finalFrames(answer: Answer, frames: string[]): Promise<string> {
  await answer.keep(answer.encoder.body(answer.meter.usage()));
  return frames.join('');
}

async function* passthroughFrames(opened: Extract<OpenedAnswer<true>, { kind: 'passthrough' }>, meter: UsageMeter, keep: KeepResponse): AsyncGenerator<string> {
  for await (const frame of opened.result.frames) {
    for (const event of frame.events) meter.observe(event);
    if (frame.finalResponse !== undefined) await keep(frame.finalResponse);
    yield frame.sse;
  }
}

/** `generator`, with `teardown` also run when a consumer ends it early (`return`). */
function withTeardown<T>(generator: AsyncGenerator<T>, teardown: () => Promise<void>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => generator.next(),
      async return(value?: unknown) {
        try {
          return await generator.return(value as T);
        } finally {
          await teardown();
        }
      },
    }),
  };
}

function iterate<T>(iterator: AsyncIterator<T>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => iterator };
}
