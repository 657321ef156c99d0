/**
 * What a Gemini error object says (`{"error":{"code","message","status","details"}}`), before a
 * 200 as a status failure and after it as an in-band error.
 * Error statuses follow https://ai.google.dev/gemini-api/docs/troubleshooting (docs/wire-protocols.md §5.5).
 */
import { isRecord, parseJson } from '../../lib/json-value.js';
import type { ErrorBodyReader } from '../shared/error-body.js';

/**
 * Gemini error reasons (`details[].reason` of a `google.rpc.ErrorInfo`) and statuses that mean the
 * gateway's own key or project is refused, whatever the HTTP status: an invalid key comes back as a
 * 400, and a project without billing in an unsupported region as a 400 `FAILED_PRECONDITION`.
 * Nothing the client can fix; another target may well succeed.
 */
const CREDENTIAL_REASONS = new Set(['API_KEY_INVALID', 'API_KEY_SERVICE_BLOCKED', 'API_KEY_HTTP_REFERRER_BLOCKED', 'API_KEY_IP_ADDRESS_BLOCKED', 'SERVICE_DISABLED', 'CONSUMER_SUSPENDED']);
const CREDENTIAL_STATUSES = new Set(['UNAUTHENTICATED', 'PERMISSION_DENIED', 'FAILED_PRECONDITION']);

/** What a Gemini error object says. */
export interface GeminiErrorBody {
  message: string | undefined;
  status: string | undefined;
  reasons: string[];
}

/** Reads a Gemini error object (the value of the top-level `error` key), or undefined. */
export function readGeminiError(value: unknown): GeminiErrorBody | undefined {
  if (!isRecord(value)) return undefined;
  const reasons: string[] = [];
  if (Array.isArray(value.details)) {
    for (const detail of value.details) if (isRecord(detail) && typeof detail.reason === 'string') reasons.push(detail.reason);
  }
  return {
    message: typeof value.message === 'string' && value.message !== '' ? value.message : undefined,
    status: typeof value.status === 'string' && value.status !== '' ? value.status : undefined,
    reasons,
  };
}

/** `STATUS: message` of a Gemini error, for logs and in-band error events (not yet redacted). */
export function describeGeminiError(error: GeminiErrorBody): string {
  const message = error.message ?? 'The upstream reported an error.';
  return error.status === undefined ? message : `${error.status}: ${message}`;
}

/** The shared HTTP client's reading of a non-2xx Gemini body. */
export const readGeminiErrorBody: ErrorBodyReader = (text) => {
  const error = parseGeminiError(text);
  if (error === undefined) return { message: undefined };
  return {
    message: error.message,
    statusName: error.status,
    refusesCredentials: CREDENTIAL_STATUSES.has(error.status ?? '') || error.reasons.some((reason) => CREDENTIAL_REASONS.has(reason)),
  };
};

function parseGeminiError(text: string): GeminiErrorBody | undefined {
  const parsed = parseJson(text);
  if (!parsed.ok) return undefined;
  // Some proxies in front of Gemini wrap the object in a one-element array.
  const value = Array.isArray(parsed.value) ? (parsed.value[0] as unknown) : parsed.value;
  return isRecord(value) ? readGeminiError(value.error) : undefined;
}
