/**
 * Authentication by the console's session cookie, shared by the admin API (admin/auth.ts) and the
 * console's own routes (console/), so it sits in neither of them. A cookie that names no live
 * session is a 401 like a made-up token. Its lookup passes the admin door's guard
 * (http/auth-guards.ts, the door of admin tokens, since a session may stand for one): within this
 * process's budget of lookups, and counted as a failed authentication of the address when it finds
 * nothing, never against the address's API-key failures.
 */
import type { FastifyRequest } from 'fastify';
import { isSessionIdShaped, resolveConsoleSession, type ConsoleSubject } from '../../admin/console-sessions.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { AccountStore } from '../../store/store.js';
import type { AuthGuards } from '../auth-guards.js';
import { refuseCrossSiteChange } from './cross-site.js';
import { sessionIdOf } from './session-cookie.js';

export interface SessionAuthDeps {
  store: AccountStore;
  /** Failed authentications per address and lookups per process (auth-guards.ts). */
  authGuards: AuthGuards;
  now?: () => number;
}

export interface ConsoleSession {
  sessionId: string;
  subject: ConsoleSubject;
  expiresAt: Date;
}

/**
 * The request's console session; null when it sent no session cookie; a 401 when the cookie names
 * no usable session, and a 403 for a change that may come from another site (cross-site.ts),
 * refused before any lookup.
 */
export async function consoleSessionOf(request: FastifyRequest, deps: SessionAuthDeps): Promise<ConsoleSession | null> {
  const sessionId = sessionIdOf(request);
  if (sessionId === undefined) return null;
  refuseCrossSiteChange(request);
  const guard = deps.authGuards.guard('admin', request);
  // A cookie that cannot be a session id costs no lookup, but is a failure all the same.
  if (isSessionIdShaped(sessionId)) await guard.beforeLookup();
  const found = await resolveConsoleSession(deps.store, sessionId, new Date((deps.now ?? Date.now)()));
  if (found !== undefined) return { sessionId, ...found };
  await guard.failed();
  throw new GatewayError('invalid_token');
}
