/**
 * Authentication by the console's session cookie, shared by the admin API (admin/auth.ts) and the
 * console's own routes. A cookie that names no live session is a 401 like a made-up token, and it
 * counts against the address's failed authentications first (the limit /v1 and the admin API
 * share), so guessing session ids costs the database no more than guessing keys.
 */
import type { FastifyRequest } from 'fastify';
import { resolveConsoleSession, type ConsoleSubject } from '../../admin/console-sessions.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Limiter } from '../../ratelimit/limiter.js';
import type { Store } from '../../store/store.js';
import { failedAuthLimit } from '../api-hooks.js';
import { refuseCrossSiteChange } from './cross-site.js';
import { sessionIdOf } from './session-cookie.js';

export interface SessionAuthDeps {
  store: Store;
  limiter: Limiter;
  authFailuresPerMinute: number;
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
  const guard = deps.authFailuresPerMinute > 0 ? failedAuthLimit(deps.limiter, request.ip, deps.authFailuresPerMinute) : undefined;
  await guard?.admit();
  const found = await resolveConsoleSession(deps.store, sessionId, new Date((deps.now ?? Date.now)()));
  if (found === undefined) throw new GatewayError('invalid_token');
  await guard?.succeeded();
  return { sessionId, ...found };
}
