/**
 * What tracing is, apart from how it is made: the settings read from the environment (tracing.ts)
 * and what the OpenTelemetry side (otel-tracer.ts, imported only when tracing is on) hands back.
 * Types only, so that both files can name them without importing each other.
 */
import type { RequestTracer } from '../observability/request-tracer.js';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingSettings {
  /** Where spans go: an OTLP collector, stdout, or both. */
  exporters: ReadonlyArray<'otlp' | 'console'>;
  protocol: OtlpProtocol;
}

export interface Tracing {
  tracer: RequestTracer;
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}
