/**
 * CSRF defence for requests authenticated by the console's cookie. SameSite=Strict already keeps
 * other sites' requests from carrying it; on top of that, a request that changes something must
 * carry the `x-tollgate-console` header (a cross-site form cannot set a custom header, and a
 * cross-site script cannot either without a CORS preflight, which we never grant), and, when the
 * browser names the request's origin, that origin must be this host.
 */
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';

export const CONSOLE_REQUEST_HEADER = 'x-tollgate-console';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Throws a 403 for a cookie-authenticated change that may come from another site. */
export function refuseCrossSiteChange(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  if (request.headers[CONSOLE_REQUEST_HEADER] !== '1') throw crossSite(`send the ${CONSOLE_REQUEST_HEADER}: 1 header with a change made through a console session`);
  if (request.headers['sec-fetch-site'] === 'cross-site') throw crossSite('the request came from another site');
  const origin = request.headers.origin;
  if (origin !== undefined && !sameHost(origin, request.headers.host)) throw crossSite('the request came from another origin');
}

function sameHost(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    // `Origin: null` (a sandboxed frame, a file) or junk.
    return false;
  }
}

function crossSite(reason: string): GatewayError {
  return new GatewayError('forbidden', { message: `Cross-site request refused: ${reason}.`, code: 'cross_site_request' });
}
