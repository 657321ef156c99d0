/**
 * The request-log row of one `/v1` answer, read once the response has ended: from its outcome
 * (observability/request-outcome.ts) when the answer got as far as a catalog model, else from what the request
 * had learnt when it was refused (its key, its route's surface). Every answer of a creation route
 * gets a row, refusals included, and so does every error answer under `/v1` (an unknown route's
 * 404, a 401 on `/v1/models`); successful reads (models, stored responses, token counts) do not,
 * nor does a client that left before its request had an outcome (it was given no answer).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestLogEntry } from '../store/store.js';
import { clientErrorCode } from '../errors/error-shapes.js';

/** What the body capture kept for a request whose model logs bodies. */
export interface CapturedBodies {
  requestBody: string | null;
  responseBody: string | null;
}

/** The log row of a `/v1` answer (undefined for one that gets none); `status` overrides the reply's. */
export function requestLogEntry(request: FastifyRequest, reply: FastifyReply, now: number, bodies: CapturedBodies | undefined, status?: number): RequestLogEntry | undefined {
  const outcome = request.outcome;
  const answerStatus = status ?? reply.statusCode;
  const surface = outcome?.surface ?? request.routeOptions.config.surface ?? null;
  if (outcome === null && surface === null && !(answerStatus >= 400 && isUnderV1(request.url))) return undefined;
  const latencyMs = reply.elapsedTime;
  const arrivedAt = now - latencyMs;
  const usage = outcome?.usage;
  const context = request.apiContext;
  return {
    at: new Date(Math.round(arrivedAt)),
    requestId: request.id,
    accountId: outcome?.accountId ?? context?.account.id ?? null,
    keyId: outcome?.keyId ?? context?.key.id ?? null,
    surface,
    model: outcome?.model ?? null,
    target: outcome === null ? null : (outcome.target ?? outcome.failedTarget),
    status: answerStatus,
    errorCode: errorCodeOf(request, reply),
    stream: outcome?.stream ?? false,
    latencyMs,
    firstByteMs: outcome === null || outcome.firstByteAt === null ? null : Math.max(0, outcome.firstByteAt - arrivedAt),
    inputTokens: tokenCount(usage?.inputTokens),
    cachedInputTokens: tokenCount(usage?.cachedInputTokens),
    cacheWriteInputTokens: tokenCount(usage?.cacheWriteInputTokens),
    outputTokens: tokenCount(usage?.outputTokens),
    reasoningTokens: tokenCount(usage?.reasoningTokens),
    costNanos: outcome?.costNanos ?? 0n,
    requestBody: bodies?.requestBody ?? null,
    responseBody: bodies?.responseBody ?? null,
  };
}

/**
 * What the client was told the error was: as the error handler rendered it, or, for a failure told
 * inside a stream (or a whole answer that says it failed), as the surface renders it there
 * (each surface's failure frame, http/v1/surfaces/: Anthropic's shape on Messages, OpenAI's elsewhere).
 */
function errorCodeOf(request: FastifyRequest, reply: FastifyReply): string | null {
  if (reply.clientErrorCode !== null) return reply.clientErrorCode;
  const outcome = request.outcome;
  if (outcome === null || outcome.errorCode === null) return null;
  if (outcome.toldCode !== null) return outcome.toldCode;
  return clientErrorCode(outcome.errorCode, outcome.surface === 'anthropic-messages' ? 'anthropic' : 'openai');
}

function isUnderV1(url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');
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
