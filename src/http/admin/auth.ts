/**
 * Authentication of the admin API: `Authorization: Bearer tg-admin-…`, looked up by its SHA-256
 * hash on every request (admin traffic is light, and a disabled token is then refused at once).
 * An API key (`sk-tg-…`) is no admin token and gets the same 401 as a made-up one; the /v1
 * authenticator likewise accepts only `sk-tg-…`, so an admin token gets 401 there.
 *
 * Without an Authorization header, the web console's session cookie is accepted instead
 * (session/session-auth.ts, with its CSRF checks). An admin token's session acts as that token; a
 * key holder's session is authenticated but has no role, so every operator route refuses it (403).
 */
import type { FastifyRequest, onRequestAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify';
import { findUsableAdminToken } from '../../admin/admin-tokens.js';
import { ADMIN_TOKEN_PREFIX } from '../../auth/key-secret.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { AccountRecord, AdminRole, AdminTokenRecord, ApiKeyRecord } from '../../store/store.js';
import { lookUpGuarded } from '../auth-guards.js';
import { consoleSessionOf, type SessionAuthDeps } from '../session/session-auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin token of an /admin/v1 request, set by its authentication hook. */
    adminToken: AdminTokenRecord | null;
    /** Set instead of `adminToken` when a key holder's console session reached the admin API. */
    consoleKeyHolder: { key: ApiKeyRecord; account: AccountRecord } | null;
  }
}

const RANK: Readonly<Record<AdminRole, number>> = { viewer: 0, operator: 1, owner: 2 };

/**
 * Admin tokens pass the admin door's guard (auth-guards.ts): a lookup within this process's
 * budget, and a failure counted against the address's allowance of failed admin authentications,
 * which made-up API keys never touch (past it, a made-up token is a 429). A good token is never
 * refused for its address's failures.
 */
export function createAdminAuthentication(deps: SessionAuthDeps): onRequestAsyncHookHandler {
  return async (request) => {
    const session = request.headers.authorization === undefined ? await consoleSessionOf(request, deps) : null;
    if (session !== null) {
      const { subject } = session;
      if (subject.kind === 'admin') request.adminToken = subject.token;
      else request.consoleKeyHolder = { key: subject.key, account: subject.account };
      return;
    }
    const token = bearerToken(request.headers.authorization);
    if (token === null) throw new GatewayError('invalid_token');
    const found = await lookUpGuarded(deps.authGuards.guard('admin', request), () => findUsableAdminToken(deps.store, token));
    if (found === undefined) throw new GatewayError('invalid_token');
    request.adminToken = found;
  };
}

/**
 * Refuses (403) a token whose role is below `role`: viewer < operator < owner. Routes run it as
 * their preValidation hook, before their schema: a token whose role does not reach a route learns
 * nothing of its input rules, and gets the 403 whatever body it sent.
 */
export function requireRole(role: AdminRole): preValidationAsyncHookHandler {
  return async (request) => {
    if (request.consoleKeyHolder !== null) {
      throw new GatewayError('forbidden', { message: "This operation needs an admin token; a key holder's console session cannot use it." });
    }
    const token = adminTokenOf(request);
    if (RANK[token.role] < RANK[role]) {
      throw new GatewayError('forbidden', { message: `This operation needs an admin token with the ${role} role; this one is a ${token.role}.` });
    }
  };
}

export function adminTokenOf(request: FastifyRequest): AdminTokenRecord {
  if (request.adminToken === null) throw new Error('admin route reached without its authentication hook');
  return request.adminToken;
}

function bearerToken(authorization: string | undefined): string | null {
  const match = authorization === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  const token = match?.[1];
  if (token === undefined || !token.startsWith(ADMIN_TOKEN_PREFIX) || token.length > 200) return null;
  return token;
}
