/**
 * A scripted model played at an AWS Bedrock runtime address (docs/wire-protocols.md §18): the
 * operation's path under `/model/{modelId}/`, every request's SigV4 signature computed again by
 * AWS's signer (the verifier of test/support/bedrock-upstream.ts) and refused in AWS's words
 * (403, `x-amzn-ErrorType`), Bedrock's 400 `ValidationException` for a body it does not take
 * (`model` or `stream` in an InvokeModel body, no `anthropic_version`; an unknown Converse field),
 * and streams in AWS's event-stream framing: InvokeModelWithResponseStream's `chunk` events
 * carrying each Anthropic event's JSON in base64 `bytes`, the last with Bedrock's
 * `amazon-bedrock-invocationMetrics` (§18.6), ConverseStream's events by name (§18.4).
 */
import type { ServerResponse } from 'node:http';
import { awsError, checkConverse, checkInvoke, eventMessage, eventStreamOfSse, longTermKey, verifySigV4 } from '../support/bedrock-upstream.js';
import { send, sseText, type DoubleAddress, type SseEvent } from './model-double-server.js';
import { isRecord } from './shell-call.js';

/** A long-term access key, and the region its signatures are scoped to. */
export interface BedrockKeys {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface BedrockAddress extends DoubleAddress {
  /** Whether the operation a request's path names streams its answer. */
  streams(path: string): boolean;
  /** Whether Bedrock refuses the body; if so, its 400 `ValidationException` has been sent. */
  refuses(body: Record<string, unknown>, response: ServerResponse): boolean;
  /** Writes a stream's events in the operation's event-stream framing. */
  writeStream(response: ServerResponse, events: ReadonlyArray<SseEvent>): void;
}

/** `invoke`: Claude's Messages body through InvokeModel(WithResponseStream); `converse`: Converse(Stream). */
export function bedrockAddress(keys: BedrockKeys, api: 'invoke' | 'converse'): BedrockAddress {
  const operations = api === 'invoke' ? ['invoke', 'invoke-with-response-stream'] : ['converse', 'converse-stream'];
  return {
    path: new RegExp(`^/model/[^/?]+/(${operations.join('|')})$`),
    authorized: async (headers, request) => {
      const signed = await verifySigV4({ method: request.method, headers }, request.path, request.body, keys.region, longTermKey(keys.accessKeyId, keys.secretAccessKey));
      return 'status' in signed ? awsError(signed.status, signed.type, signed.message) : true;
    },
    streams: (path) => path.endsWith(`/${operations[1]}`),
    refuses: (body, response) => {
      const refusal = (api === 'invoke' ? checkInvoke : checkConverse)(body);
      if (refusal !== undefined) send(response, awsError(400, 'ValidationException', refusal));
      return refusal !== undefined;
    },
    writeStream: (response, events) => {
      response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      response.end(api === 'invoke' ? eventStreamOfSse(sseText(withInvocationMetrics(events))) : Buffer.concat(events.map(({ event, data }) => eventMessage(event ?? '', data as Record<string, unknown>))));
    },
  };
}

/** Claude's events with what Bedrock adds to the last one: `amazon-bedrock-invocationMetrics`, its token counts. */
function withInvocationMetrics(events: ReadonlyArray<SseEvent>): SseEvent[] {
  const usageOf = (type: string) => events.map(({ data }) => data as { type?: string; message?: { usage?: Record<string, number> }; usage?: Record<string, number> }).find((data) => data.type === type);
  const metrics = {
    inputTokenCount: usageOf('message_start')?.message?.usage?.input_tokens ?? 0,
    outputTokenCount: usageOf('message_delta')?.usage?.output_tokens ?? 0,
    invocationLatency: 321,
    firstByteLatency: 123,
  };
  return events.map((event) => (isRecord(event.data) && event.data.type === 'message_stop' ? { ...event, data: { ...event.data, 'amazon-bedrock-invocationMetrics': metrics } } : event));
}
