/**
 * The request-log row of one answered `/v1` request, read from its outcome (request-outcome.ts)
 * once the response has ended. A request refused before routing has no outcome and no row.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestLogEntry } from '../../store/store.js';

/** What the body capture kept for a request whose model logs bodies. */
export interface CapturedBodies {
  requestBody: string | null;
  responseBody: string | null;
}

/** The log row of a routed request (undefined for one that never reached a model); `status` overrides the reply's. */
export function requestLogEntry(request: FastifyRequest, reply: FastifyReply, now: number, bodies: CapturedBodies | undefined, status?: number): RequestLogEntry | undefined {
  const outcome = request.outcome;
  if (outcome === null) return undefined;
  const latencyMs = reply.elapsedTime;
  const arrivedAt = now - latencyMs;
  const usage = outcome.usage;
  return {
    at: new Date(Math.round(arrivedAt)),
    requestId: request.id,
    accountId: outcome.accountId,
    keyId: outcome.keyId,
    surface: outcome.surface,
    model: outcome.model,
    target: outcome.target,
    status: status ?? reply.statusCode,
    // The outcome knows a mid-stream failure; an answer rendered by the error handler carries its code.
    errorCode: outcome.errorCode ?? reply.gatewayErrorCode,
    stream: outcome.stream,
    latencyMs,
    firstByteMs: outcome.firstByteAt === null ? null : Math.max(0, outcome.firstByteAt - arrivedAt),
    inputTokens: tokenCount(usage?.inputTokens),
    cachedInputTokens: tokenCount(usage?.cachedInputTokens),
    cacheWriteInputTokens: tokenCount(usage?.cacheWriteInputTokens),
    outputTokens: tokenCount(usage?.outputTokens),
    reasoningTokens: tokenCount(usage?.reasoningTokens),
    costNanos: outcome.costNanos,
    requestBody: bodies?.requestBody ?? null,
    responseBody: bodies?.responseBody ?? null,
  };
}

/** Billing checked the counts it charged; a column still never gets a value it cannot hold. */
function tokenCount(value: number | undefined): number {
  return value === undefined || !Number.isSafeInteger(value) || value < 0 ? 0 : Math.min(value, 2_147_483_647);
}

/** `text` cut to at most `maxBytes` of UTF-8, never in the middle of a character. */
export function capUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  let end = maxBytes;
  // The first byte left out continues a character begun before it: leave that character out too.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}
