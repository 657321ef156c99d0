/**
 * OpenTelemetry traces: off unless the standard `OTEL_*` environment asks for them, and then the
 * SDK is imported (lazily: with tracing off, no OpenTelemetry module is ever loaded and the request
 * path has no tracing hook at all).
 *
 * On when `OTEL_TRACES_EXPORTER` names `otlp` or `console`, or, with it unset, when an OTLP endpoint
 * is given (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`). Off with
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. OTLP goes over HTTP, protobuf by default
 * or JSON with `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` (or `OTEL_EXPORTER_OTLP_PROTOCOL`) `http/json`.
 * The SDK reads the rest itself from the process environment: endpoint, headers, timeout,
 * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER(_ARG)`, `OTEL_BSP_*`.
 */
import type { Logger } from 'pino';
import type { Env } from '../config/env.js';
import type { OtlpProtocol, Tracing, TracingSettings } from './tracing-types.js';

const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'];

/** What the environment asks for; null when tracing is off. Throws on a value it cannot honour. */
export function tracingSettings(env: Env): TracingSettings | null {
  if (value(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return null;
  const named = (value(env.OTEL_TRACES_EXPORTER) ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  const endpoint = value(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ?? value(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  // The specification's default exporter is otlp; here an endpoint must be given too, so that
  // tracing stays off until an operator points it somewhere.
  const exporters = named.length > 0 ? named : endpoint === undefined ? [] : ['otlp'];
  if (exporters.length === 0 || exporters.includes('none')) return null;
  for (const exporter of exporters) {
    if (exporter !== 'otlp' && exporter !== 'console') throw new Error(`OTEL_TRACES_EXPORTER: "${exporter}" is not supported here (otlp, console or none)`);
  }
  const protocol = value(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? value(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? 'http/protobuf';
  if (!PROTOCOLS.includes(protocol)) throw new Error(`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "${protocol}" is not supported here (http/protobuf or http/json)`);
  return { exporters: [...new Set(exporters as Array<'otlp' | 'console'>)], protocol: protocol as OtlpProtocol };
}

/** Starts tracing when the environment asks for it; undefined (and nothing loaded) otherwise. */
export async function startTracing(env: Env, logger: Logger): Promise<Tracing | undefined> {
  const settings = tracingSettings(env);
  if (settings === null) return undefined;
  const { createOtelTracing } = await import('./otel-tracer.js');
  const tracing = await createOtelTracing(settings, logger);
  logger.info({ exporters: settings.exporters, protocol: settings.protocol }, 'OpenTelemetry tracing on');
  return tracing;
}

function value(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
