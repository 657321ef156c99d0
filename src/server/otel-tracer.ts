/**
 * The OpenTelemetry side of tracing, imported only when tracing is on (tracing.ts). One SERVER span
 * per `/v1` request and one CLIENT span per upstream attempt as its child (a failover shows every
 * attempt). Attributes are the request's route and status, the catalog model, the surface, the
 * target, the tokens and the cost: never a key or token, a prompt, an answer or any body.
 *
 * Spans are roots: a client's `traceparent` is not followed, since the clients of a public gateway
 * are not part of the operator's system. Parents are passed explicitly, so no global context manager
 * or provider is registered.
 */
import { DiagLogLevel, ROOT_CONTEXT, SpanKind, SpanStatusCode, diag, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { detectResources, envDetector, defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { RequestTracer } from '../observability/request-tracer.js';
import type { RequestOutcome } from '../observability/request-outcome.js';
import type { AttemptEnd, AttemptRoute } from '../routing/router.js';
import type { Target } from '../routing/catalog.js';
import type { Tracing, TracingSettings } from './tracing-types.js';

interface RequestSpans {
  span: Span;
  context: Context;
  /** The attempt the router committed to; ended with the request, once its usage is known. */
  upstream: Span | null;
}

export async function createOtelTracing(settings: TracingSettings, logger: Logger): Promise<Tracing> {
  // The SDK reports export failures (collector away) through its diagnostic logger.
  diag.setLogger(
    {
      error: (message) => logger.warn({ component: 'opentelemetry' }, message),
      warn: (message) => logger.warn({ component: 'opentelemetry' }, message),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.WARN,
  );
  const exporters = await Promise.all(settings.exporters.map((name) => (name === 'console' ? new ConsoleSpanExporter() : otlpExporter(settings.protocol))));
  const provider = new BasicTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the default name.
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': 'tollgate' })).merge(detectResources({ detectors: [envDetector] })),
    // Batched off the request path (OTEL_BSP_* tune it).
    spanProcessors: exporters.map((exporter) => new BatchSpanProcessor(exporter)),
  });
  return { tracer: new OtelRequestTracer(provider.getTracer('tollgate')), shutdown: () => provider.shutdown() };
}

async function otlpExporter(protocol: TracingSettings['protocol']): Promise<SpanExporter> {
  // Endpoint, headers and timeout come from the OTEL_EXPORTER_OTLP_* environment.
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
}

export class OtelRequestTracer implements RequestTracer {
  /** The spans of requests in flight, by request id (the router knows a request by its id). */
  private readonly live = new Map<string, RequestSpans>();

  constructor(private readonly tracer: Tracer) {}

  requestStarted(request: FastifyRequest): void {
    const route = request.routeOptions.url ?? 'unknown';
    const span = this.tracer.startSpan(
      `${request.method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route, 'tollgate.request_id': request.id } },
      ROOT_CONTEXT,
    );
    this.live.set(request.id, { span, context: trace.setSpan(ROOT_CONTEXT, span), upstream: null });
  }

  readonly observeAttempt = (target: Target, route: AttemptRoute): AttemptEnd => {
    const parent = this.live.get(route.requestId);
    const span = this.tracer.startSpan(
      `upstream ${target.provider.name}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'tollgate.target': target.label,
          'tollgate.provider': target.provider.name,
          'tollgate.model': route.model.id,
          'gen_ai.request.model': target.upstreamModel,
          'tollgate.stream': route.stream,
        },
      },
      parent?.context ?? ROOT_CONTEXT,
    );
    return {
      opened: () => {
        if (parent === undefined) span.end();
        else parent.upstream = span;
      },
      failed: (reason) => {
        const kind = reason === 'aborted' ? 'aborted' : reason.kind;
        span.setAttribute('error.type', kind);
        if (reason !== 'aborted' && reason.status !== undefined) span.setAttribute('http.response.status_code', reason.status);
        // The kind only: an upstream's own message may quote what it was sent.
        span.setStatus({ code: SpanStatusCode.ERROR, message: kind });
        span.end();
      },
    };
  };

  requestEnded(request: FastifyRequest, reply: FastifyReply): void {
    const spans = this.live.get(request.id);
    if (spans === undefined) return;
    this.live.delete(request.id);
    const { span, upstream } = spans;
    const outcome = request.outcome;
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (!reply.raw.writableFinished) span.setAttribute('tollgate.client_aborted', true);
    const errorCode = outcome?.errorCode ?? reply.gatewayErrorCode;
    if (errorCode !== null) span.setAttribute('error.type', errorCode);
    // As HTTP servers do: a 5xx is the server's failure, a 4xx the client's; a stream that failed
    // after its 200 is one too.
    if (reply.statusCode >= 500 || outcome?.errorCode != null) span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode ?? String(reply.statusCode) });
    if (outcome !== null) {
      span.setAttributes(outcomeAttributes(outcome));
      if (upstream !== null) {
        upstream.setAttributes(usageAttributes(outcome));
        if (outcome.errorCode !== null) {
          upstream.setAttribute('error.type', outcome.errorCode);
          upstream.setStatus({ code: SpanStatusCode.ERROR, message: outcome.errorCode });
        }
      }
    }
    upstream?.end();
    span.end();
  }
}

function outcomeAttributes(outcome: RequestOutcome): Attributes {
  return {
    'tollgate.model': outcome.model,
    'tollgate.surface': outcome.surface,
    'tollgate.stream': outcome.stream,
    'tollgate.account_id': outcome.accountId,
    ...(outcome.target === null ? {} : { 'tollgate.target': outcome.target }),
    ...usageAttributes(outcome),
  };
}

/** Tokens as billed (GenAI semantic conventions where one exists) and the cost in nano-USD. */
function usageAttributes(outcome: RequestOutcome): Attributes {
  const usage = outcome.usage;
  return {
    'tollgate.cost_nanos': Number(outcome.costNanos),
    ...(usage === null
      ? {}
      : {
          'gen_ai.usage.input_tokens': usage.inputTokens,
          'gen_ai.usage.output_tokens': usage.outputTokens,
          'tollgate.usage.cached_input_tokens': usage.cachedInputTokens,
          'tollgate.usage.cache_write_input_tokens': usage.cacheWriteInputTokens ?? 0,
          'tollgate.usage.reasoning_tokens': usage.reasoningTokens,
        }),
  };
}
