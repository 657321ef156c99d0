/**
 * An OpenTelemetry collector double: a real HTTP server on loopback that takes OTLP/HTTP trace
 * exports (`POST /v1/traces`) and keeps the raw bodies (to search them for what must never be
 * sent). JSON exports (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json`) are decoded into spans;
 * protobuf ones (the default protocol) are kept raw only, where strings still show as bytes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  status: { code: number; message?: string };
  resource: Record<string, AttributeValue>;
}

export interface OtlpReceiver {
  /** For OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. */
  tracesUrl: string;
  spans: ReceivedSpan[];
  /** Every export body as received (protobuf ones as latin1, one character per byte). */
  rawBodies: string[];
  /** How many exports came as protobuf. */
  protobufExports(): number;
  close(): Promise<void>;
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
}

function attributes(list: OtlpAttribute[] | undefined): Record<string, AttributeValue> {
  const result: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) result[key] = value.stringValue;
    else if (value.intValue !== undefined) result[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) result[key] = value.doubleValue;
    else if (value.boolValue !== undefined) result[key] = value.boolValue;
  }
  return result;
}

interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttribute[]; status?: { code?: number; message?: string } }>;
    }>;
  }>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const rawBodies: string[] = [];
  let protobuf = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const type = String(request.headers['content-type']);
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      if (type.startsWith('application/x-protobuf')) {
        rawBodies.push(Buffer.concat(chunks).toString('latin1'));
        protobuf += 1;
        // An empty ExportTraceServiceResponse.
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        return;
      }
      if (!type.startsWith('application/json')) {
        response.writeHead(415).end();
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      rawBodies.push(raw);
      const body = JSON.parse(raw) as ExportRequest;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributes(resourceSpans.resource?.attributes);
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              attributes: attributes(span.attributes),
              status: { code: span.status?.code ?? 0, ...(span.status?.message === undefined ? {} : { message: span.status.message }) },
              resource,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    tracesUrl: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    rawBodies,
    protobufExports: () => protobuf,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
