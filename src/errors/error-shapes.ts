/**
 * The body an error is rendered in, chosen by the surface of the route: OpenAI's
 * `{"error":{"message","type","param","code"}}` everywhere (the spec's table), and Anthropic's
 * `{"type":"error","error":{"type","message"}}` under `/v1/messages`, so that Anthropic clients
 * (Claude Code, the SDKs) parse it and show the catalogue's message. Status and message are the
 * catalogue's on both; Anthropic's `error.type` follows the status, as Anthropic's API does
 * (https://docs.anthropic.com/en/api/errors).
 */
import { ERROR_CATALOGUE, type GatewayError, type GatewayErrorCode } from './gateway-error.js';

export type ErrorShape = 'openai' | 'anthropic';

/** The routes whose clients speak Anthropic's Messages API. */
const ANTHROPIC_PREFIX = '/v1/messages';

/**
 * Anthropic's shape for the Messages routes, and for any request from one of Anthropic's clients
 * (they all send `anthropic-version`, e.g. Claude Code listing `/v1/models`).
 */
export function errorShapeOf(url: string, headers: Readonly<Record<string, unknown>> = {}): ErrorShape {
  const path = url.split('?', 1)[0] ?? url;
  if (path === ANTHROPIC_PREFIX || path.startsWith(`${ANTHROPIC_PREFIX}/`)) return 'anthropic';
  return headers['anthropic-version'] === undefined ? 'openai' : 'anthropic';
}

const ANTHROPIC_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
};

/** Anthropic's `error.type` for an HTTP status. */
export function anthropicErrorType(status: number): string {
  return ANTHROPIC_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/**
 * What names the error to the client that got it in `shape`, for the request log: the body's
 * `code`, or its `type` where it has no code (an empty one, or Anthropic's shape, which has none).
 * `wireCode` is the code the body carried when it differs from the catalogue's (a validation code).
 */
export function clientErrorCode(errorCode: GatewayErrorCode, shape: ErrorShape, wireCode?: string): string {
  const entry = ERROR_CATALOGUE[errorCode];
  if (shape === 'anthropic') return anthropicErrorType(entry.status);
  const code = wireCode ?? entry.code;
  return code === '' ? entry.type : code;
}

/**
 * The error body in `shape`. Anthropic's has no `param`, so a message that does not name its field
 * gets it in front, the way Anthropic words its own (`messages.0.role: …`).
 */
export function errorBody(error: GatewayError, shape: ErrorShape): Record<string, unknown> {
  if (shape === 'openai') return error.toBody();
  const param = error.param;
  const message = param !== null && param !== '' && !error.message.includes(param) ? `${param}: ${error.message}` : error.message;
  return { type: 'error', error: { type: anthropicErrorType(error.status), message } };
}
