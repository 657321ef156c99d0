/**
 * What a failed connection to an upstream means, read from the error undici or Node gives: whether
 * it was the connection, a timeout or an unreadable answer (before the 200), and a text safe to
 * show the client (after it). The same for every HTTP provider.
 */
import { isRecord } from '../../lib/json-value.js';
import { SseDecodeError } from '../../lib/sse-decoder.js';
import type { UpstreamFailureKind } from '../provider.js';

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const PROTOCOL_CODE_PREFIXES = ['HPE_', 'UND_ERR_HEADERS_OVERFLOW', 'UND_ERR_RES_', 'UND_ERR_INFO'];

/** A transport failure before the 200, classified. */
export interface TransportFailure {
  kind: Extract<UpstreamFailureKind, 'connect' | 'timeout' | 'protocol'>;
  /** What happened, in words, with the error code (no addresses: codes only). */
  detail: string;
}

/** Classifies a failure to get an answer at all: connect (the default), timeout, or protocol. */
export function classifyTransportFailure(error: unknown): TransportFailure {
  const code = errorCode(error);
  let kind: TransportFailure['kind'] = 'connect';
  if (code !== undefined && TIMEOUT_CODES.has(code)) kind = 'timeout';
  else if (code !== undefined && PROTOCOL_CODE_PREFIXES.some((prefix) => code.startsWith(prefix))) kind = 'protocol';
  const what = kind === 'timeout' ? 'the upstream did not answer in time' : kind === 'protocol' ? 'the upstream answered something unreadable' : 'could not reach the upstream';
  return { kind, detail: `${what} (${code ?? 'unknown error'})` };
}

/**
 * A text, safe to show the client, for a failure while reading an accepted stream (after the 200).
 */
export function describeStreamFailure(error: unknown): string {
  if (error instanceof SseDecodeError) return 'The upstream sent a stream event larger than allowed.';
  const code = errorCode(error);
  if (code === 'UND_ERR_BODY_TIMEOUT') return 'The upstream stopped sending data (idle timeout).';
  if (code === 'UND_ERR_ABORTED' || (error instanceof Error && error.name === 'AbortError')) return 'The upstream request was cancelled.';
  return 'The upstream connection was lost mid-stream.';
}

/** The first `code` found on an error, its causes, or (happy-eyeballs connects) its inner errors. */
export function errorCode(error: unknown): string | undefined {
  if (!isRecord(error)) return undefined;
  if (typeof error.code === 'string') return error.code;
  // Happy-eyeballs connects fail with an AggregateError of one error per address.
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const innerCode = errorCode(inner);
      if (innerCode !== undefined) return innerCode;
    }
  }
  return error.cause === undefined || error.cause === error ? undefined : errorCode(error.cause);
}
