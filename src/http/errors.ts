/**
 * Maps anything thrown while serving a request to the one GatewayError the client sees. Upstream
 * details are never shown; unknown errors become a 500 without internals (and are logged once).
 */
import { GatewayError } from '../errors/gateway-error.js';
import { InvalidRequestError } from '../protocol/canonical.js';
import { UpstreamError } from '../providers/provider.js';
import { NoTargetAvailableError } from '../routing/router.js';
import { isDatabaseUnavailable } from '../store/dependency-errors.js';

interface FrameworkError {
  code?: unknown;
  statusCode?: unknown;
}

/** The client-facing error for `error`, and whether it was unexpected (a bug, to be logged as such). */
export function toGatewayError(error: unknown): { gatewayError: GatewayError; unexpected: boolean } {
  if (error instanceof GatewayError) return { gatewayError: error, unexpected: false };
  if (error instanceof InvalidRequestError) {
    const options = { message: error.message, param: error.param, ...(error.code === null ? {} : { code: error.code }) };
    return { gatewayError: new GatewayError('invalid_request', options), unexpected: false };
  }
  if (error instanceof NoTargetAvailableError) return { gatewayError: new GatewayError('model_unavailable'), unexpected: false };
  if (error instanceof UpstreamError) return { gatewayError: fromUpstream(error), unexpected: false };
  const framework = (typeof error === 'object' && error !== null ? error : {}) as FrameworkError;
  if (framework.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { gatewayError: new GatewayError('body_too_large'), unexpected: false };
  if (typeof framework.code === 'string' && framework.code.startsWith('FST_ERR_CTP_')) {
    return { gatewayError: new GatewayError('invalid_json'), unexpected: false };
  }
  if (typeof framework.statusCode === 'number' && framework.statusCode >= 400 && framework.statusCode < 500) {
    return { gatewayError: new GatewayError('invalid_request', { message: 'Invalid request.' }), unexpected: false };
  }
  if (isDatabaseUnavailable(error)) return { gatewayError: new GatewayError('service_unavailable', { headers: { 'retry-after': '1' } }), unexpected: false };
  return { gatewayError: new GatewayError('internal'), unexpected: true };
}

function fromUpstream(error: UpstreamError): GatewayError {
  if (error.kind === 'status' && error.status !== undefined && error.status >= 400 && error.status < 500 && !error.failoverable) {
    const reason = error.clientMessage ?? 'The upstream provider rejected the request.';
    return new GatewayError('upstream_rejected', { message: reason, ...(error.clientCode === undefined ? {} : { code: error.clientCode }) });
  }
  if (error.kind === 'timeout') return new GatewayError('upstream_timeout');
  return new GatewayError('upstream_error');
}
