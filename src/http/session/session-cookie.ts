/**
 * The console's session cookie: HTTP-only (scripts cannot read it), SameSite=Strict (no other site
 * can make the browser send it), Path=/ (it authenticates /console/api and /admin/v1), with the
 * session's expiry, and Secure when the browser reached us over HTTPS.
 */
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'tollgate_session';

/** The session id the browser sent, if any. */
export function sessionIdOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined || header === '') return undefined;
  return parseCookie(header)[SESSION_COOKIE];
}

export function sessionCookie(request: FastifyRequest, sessionId: string, expiresAt: Date, now: Date): string {
  return stringifySetCookie({
    name: SESSION_COOKIE,
    value: sessionId,
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: reachedOverHttps(request),
    expires: expiresAt,
    maxAge: Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000)),
  });
}

/** Tells the browser to drop the cookie (logout). */
export function clearedSessionCookie(request: FastifyRequest): string {
  return stringifySetCookie({
    name: SESSION_COOKIE,
    value: '',
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: reachedOverHttps(request),
    expires: new Date(0),
    maxAge: 0,
  });
}

/**
 * HTTPS to us, or to a TLS-terminating proxy in front of us that says so in X-Forwarded-Proto. The
 * header is believed for this one purpose only: a forged one can only add `Secure`, which makes a
 * plain-HTTP browser drop the cookie, never weaken it.
 */
function reachedOverHttps(request: FastifyRequest): boolean {
  if (request.protocol === 'https') return true;
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',', 1)[0]?.trim().toLowerCase();
  return first === 'https';
}
