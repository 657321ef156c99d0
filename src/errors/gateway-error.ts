/**
 * The closed set of errors Tollgate answers with, and the catalogue that fixes each one's HTTP
 * status, `type`, `code`, and whether `param` is present. The first six rows are the spec's error
 * table (docs/contract.md §7) to the byte; the rest cover what the spec does not show, in OpenAI's
 * style (docs/wire-protocols.md §6.2). Only http/ renders these; everyone else throws them. The code set
 * doubles as the metrics label.
 */

export type GatewayErrorCode =
  | 'invalid_json'
  | 'invalid_token'
  | 'insufficient_balance'
  | 'route_not_found'
  | 'rate_limited'
  | 'model_unavailable'
  | 'invalid_request'
  | 'body_too_large'
  | 'not_found'
  | 'upstream_rejected'
  | 'upstream_error'
  | 'upstream_timeout'
  | 'service_unavailable'
  | 'internal'
  | 'json_too_deep'
  | 'bad_http_request'
  | 'missing_host'
  | 'request_timeout'
  | 'uri_too_long'
  | 'expectation_failed'
  | 'headers_too_large'
  | 'forbidden'
  | 'conflict'
  | 'key_budget_exceeded';

/**
 * How `param` is rendered: absent, always `""`, or the field the error is about (absent when the
 * error is about no field: the spec allows a string or nothing, never null).
 */
type ParamRule = 'absent' | 'empty' | 'field';

interface CatalogueEntry {
  status: number;
  type: string;
  /** Default `code`; errors that carry their own (validation) override it. */
  code: string;
  param: ParamRule;
  /** Default message; a function when it depends on details. */
  message: string;
}

export const ERROR_CATALOGUE: Readonly<Record<GatewayErrorCode, CatalogueEntry>> = Object.freeze({
  invalid_json: { status: 400, type: 'service_api_error', code: '', param: 'absent', message: 'Invalid request: invalid JSON request body.' },
  invalid_token: { status: 401, type: 'service_api_error', code: '', param: 'absent', message: 'Invalid token.' },
  insufficient_balance: { status: 403, type: 'service_api_error', code: 'insufficient_user_quota', param: 'empty', message: 'Insufficient balance.' },
  route_not_found: { status: 404, type: 'invalid_request_error', code: '', param: 'empty', message: 'Invalid URL' },
  rate_limited: { status: 429, type: 'service_api_error', code: '', param: 'absent', message: 'Rate limit exceeded.' },
  model_unavailable: { status: 503, type: 'service_api_error', code: 'model_not_found', param: 'absent', message: 'The requested model is currently unavailable.' },
  invalid_request: { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'field', message: 'Invalid request.' },
  body_too_large: { status: 413, type: 'invalid_request_error', code: 'request_too_large', param: 'field', message: 'Request body too large.' },
  not_found: { status: 404, type: 'invalid_request_error', code: 'not_found', param: 'field', message: 'Not found.' },
  upstream_rejected: { status: 400, type: 'invalid_request_error', code: 'upstream_rejected', param: 'field', message: 'The upstream provider rejected the request.' },
  upstream_error: { status: 502, type: 'server_error', code: 'upstream_error', param: 'field', message: 'The upstream provider failed to answer.' },
  upstream_timeout: { status: 504, type: 'server_error', code: 'upstream_timeout', param: 'field', message: 'The upstream provider did not answer in time.' },
  // Shaped like the spec's 503 (type service_api_error, no param), with its own code and message.
  service_unavailable: { status: 503, type: 'service_api_error', code: 'service_unavailable', param: 'absent', message: 'The service is temporarily unavailable; retry with backoff.' },
  internal: { status: 500, type: 'server_error', code: 'internal_error', param: 'field', message: 'The server had an error while processing your request.' },
  // Valid JSON nested deeper than the decoder allows (http/body.ts); the message names the limit.
  json_too_deep: { status: 400, type: 'invalid_request_error', code: 'json_too_deep', param: 'absent', message: 'Invalid request: JSON nested too deeply.' },
  // What Node's HTTP parser refuses before any route sees the request (http/client-errors.ts).
  bad_http_request: { status: 400, type: 'invalid_request_error', code: 'bad_request', param: 'absent', message: 'Invalid request: malformed HTTP request.' },
  missing_host: { status: 400, type: 'invalid_request_error', code: 'missing_host_header', param: 'absent', message: 'Invalid request: an HTTP/1.1 request must carry a Host header.' },
  request_timeout: { status: 408, type: 'invalid_request_error', code: 'request_timeout', param: 'absent', message: 'The request was not received in time.' },
  uri_too_long: { status: 414, type: 'invalid_request_error', code: 'uri_too_long', param: 'absent', message: 'Request URI too long.' },
  expectation_failed: { status: 417, type: 'invalid_request_error', code: 'expectation_failed', param: 'absent', message: 'Expectation failed: only "Expect: 100-continue" is supported.' },
  // The admin API (http/admin/): a token whose role does not reach the route, and a change that
  // contradicts the current state (a name taken, a debit beyond the balance), in OpenAI's style.
  forbidden: { status: 403, type: 'invalid_request_error', code: 'insufficient_permissions', param: 'absent', message: 'This admin token does not have the role this operation needs.' },
  conflict: { status: 409, type: 'invalid_request_error', code: 'conflict', param: 'field', message: 'The request conflicts with the current state.' },
  // The 403 of a balance (the spec's row) for a key's own spend limit: same status, type, code and
  // param, so clients handle both alike; only the message says it is the key's budget.
  key_budget_exceeded: {
    status: 403,
    type: 'service_api_error',
    code: 'insufficient_user_quota',
    param: 'empty',
    message: "Insufficient key budget: this API key's spend limit cannot cover the request.",
  },
  headers_too_large: { status: 431, type: 'invalid_request_error', code: 'request_header_fields_too_large', param: 'absent', message: 'Request header fields too large.' },
});

export interface GatewayErrorOptions {
  message?: string;
  param?: string | null;
  code?: string;
  /** Extra response headers (retry-after on 429, for instance). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly errorCode: GatewayErrorCode;
  readonly status: number;
  readonly param: string | null;
  readonly wireCode: string;
  readonly headers: Record<string, string>;

  constructor(errorCode: GatewayErrorCode, options: GatewayErrorOptions = {}) {
    const entry = ERROR_CATALOGUE[errorCode];
    super(options.message ?? entry.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.errorCode = errorCode;
    this.status = entry.status;
    this.param = options.param ?? null;
    this.wireCode = options.code ?? entry.code;
    this.headers = options.headers ?? {};
  }

  /** The spec's 404 for an unknown route: `Invalid URL (<METHOD> <path>)`, path without its query. */
  static routeNotFound(method: string, url: string): GatewayError {
    const path = url.split('?', 1)[0] ?? url;
    return new GatewayError('route_not_found', { message: `Invalid URL (${method} ${path})` });
  }

  /** The JSON body, with keys in OpenAI's order: message, type, param, code. */
  toBody(): { error: Record<string, string> } {
    const entry = ERROR_CATALOGUE[this.errorCode];
    const error: Record<string, string> = { message: this.message, type: entry.type };
    if (entry.param === 'empty') error.param = '';
    else if (entry.param === 'field' && this.param !== null) error.param = this.param;
    error.code = this.wireCode;
    return { error };
  }
}
