import { createRequire } from 'node:module';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startTracing, tracingSettings } from './tracing.js';

const loadedOpenTelemetry = () => Object.keys(createRequire(import.meta.url).cache).filter((path) => path.includes('@opentelemetry'));

describe('tracingSettings', () => {
  it('is off without OTEL_* settings, and when they say so', () => {
    expect(tracingSettings({})).toBeNull();
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBeNull();
    expect(tracingSettings({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeNull();
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: '  ', OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeNull();
  });

  it('is on with an OTLP endpoint or a named exporter, over protobuf unless JSON is asked for', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({ exporters: ['otlp'], protocol: 'http/protobuf' });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual({ exporters: ['otlp'], protocol: 'http/json' });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toEqual({ exporters: ['otlp'], protocol: 'http/protobuf' });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'console, OTLP,otlp' })).toEqual({ exporters: ['console', 'otlp'], protocol: 'http/protobuf' });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'false' })).toEqual({ exporters: ['otlp'], protocol: 'http/protobuf' });
  });

  it('refuses what it cannot honour, naming the variable', () => {
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER: "zipkin"/);
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/"grpc" is not supported/);
  });
});

describe('startTracing', () => {
  const logger = pino({ level: 'silent' });

  // First in this file: nothing else here has loaded the SDK yet.
  it('off: loads no OpenTelemetry module at all', async () => {
    expect(await startTracing({}, logger)).toBeUndefined();
    expect(loadedOpenTelemetry()).toEqual([]);
  });

  it('on: loads the SDK and gives a tracer that can be shut down', async () => {
    const tracing = await startTracing({ OTEL_TRACES_EXPORTER: 'console' }, logger);
    expect(tracing).toBeDefined();
    expect(loadedOpenTelemetry().length).toBeGreaterThan(0);
    await tracing!.shutdown();
  });
});
