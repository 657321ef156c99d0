/**
 * `/console/api/session`: log in (an admin token or an API key for a session cookie), who am I,
 * log out. The credential is sent once, in the body, and never again: from then on the browser
 * holds only the HTTP-only cookie (../session/session-cookie.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { endConsoleSession, openConsoleSession, subjectOfCredential, type ConsoleSubject } from '../../admin/console-sessions.js';
import { accountView, adminTokenView, keyView } from '../../admin/views.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { ADMIN_TOKEN_PREFIX } from '../../auth/key-secret.js';
import { lookUpGuarded } from '../auth-guards.js';
import { parseJsonBody } from '../body.js';
import { invalidInputError } from '../input-errors.js';
import { refuseCrossSiteChange } from '../session/cross-site.js';
import { consoleSessionOf, type SessionAuthDeps } from '../session/session-auth.js';
import { clearedSessionCookie, sessionCookie, sessionIdOf } from '../session/session-cookie.js';

export interface SessionRouteDeps extends SessionAuthDeps {
  now: () => number;
  /** Whether admin tokens may sign in through this request's listener (see console.ts). */
  adminSignInAllowed: (request: FastifyRequest) => boolean;
}

const loginBody = z.object({ token: z.string().min(1).max(200) }).strict();

/** What the console shows about the signed-in subject: the same views the admin API answers with. */
export function sessionView(subject: ConsoleSubject, expiresAt: Date, now: Date): Record<string, unknown> {
  const expires = { expires_at: expiresAt.toISOString() };
  if (subject.kind === 'admin') return { kind: 'admin', ...expires, admin_token: adminTokenView(subject.token) };
  return { kind: 'key', ...expires, key: keyView(subject.key, now), account: accountView(subject.account) };
}

export function registerSessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  app.post('/api/session', async (request, reply) => {
    // Also a login: a cross-site page must not sign the browser in to a session of its choosing.
    refuseCrossSiteChange(request);
    const parsed = loginBody.safeParse(parseJsonBody(request.body));
    if (!parsed.success) {
      // An unknown field is named, as everywhere; anything else about the token gets one plain answer.
      const issue = parsed.error.issues[0];
      if (issue?.code === 'unrecognized_keys') throw invalidInputError(issue);
      throw new GatewayError('invalid_request', { message: 'Invalid request: send {"token": "<admin token or API key>"}.', param: 'token' });
    }
    const credential = parsed.data.token.trim();
    // An admin token signs in at the admin door: made-up API keys never lock an operator out.
    const guard = deps.authGuards.guard(credential.startsWith(ADMIN_TOKEN_PREFIX) ? 'admin' : 'key', request);
    const now = new Date(deps.now());
    const subject = await lookUpGuarded(guard, () => subjectOfCredential(deps.store, credential, now));
    if (subject === undefined) throw new GatewayError('invalid_token');
    if (subject.kind === 'admin' && !deps.adminSignInAllowed(request)) {
      throw new GatewayError('forbidden', { message: 'The admin API is served on its own port (TOLLGATE_ADMIN_PORT): sign in with an admin token there.' });
    }
    const opened = await openConsoleSession(deps.store, subject, now);
    request.log.info({ kind: subject.kind, subject: subject.kind === 'admin' ? subject.token.id : subject.key.id }, 'console session opened');
    return reply.code(201).header('set-cookie', sessionCookie(request, opened.sessionId, opened.expiresAt, now)).send(sessionView(subject, opened.expiresAt, now));
  });

  app.get('/api/session', async (request) => {
    const session = await consoleSessionOf(request, deps);
    if (session === null) throw new GatewayError('invalid_token');
    return sessionView(session.subject, session.expiresAt, new Date(deps.now()));
  });

  app.delete('/api/session', async (request, reply) => {
    refuseCrossSiteChange(request);
    const sessionId = sessionIdOf(request);
    if (sessionId !== undefined) await endConsoleSession(deps.store, sessionId);
    return reply.code(204).header('set-cookie', clearedSessionCookie(request)).send();
  });
}
