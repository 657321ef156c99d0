/**
 * Authentication of the admin API: `Authorization: Bearer tg-admin-…`, looked up by its SHA-256
 * hash on every request (admin traffic is light, and a disabled token is then refused at once).
 * An API key (`sk-tg-…`) is no admin token and gets the same 401 as a made-up one; the /v1
 * authenticator likewise accepts only `sk-tg-…`, so an admin token gets 401 there.
 *
 * Without an Authorization header, the web console's session cookie is accepted instead
 * (console/session-auth.ts, with its CSRF checks). An admin token's session acts as that token; a
 * key holder's session is authenticated but has no role, so every operator route refuses it (403).
 */
import type { FastifyRequest, onRequestAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify';
import { ADMIN_TOKEN_PREFIX, hashesEqual, hashKeySecret } from '../../auth/key-secret.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Limiter } from '../../ratelimit/limiter.js';
import type { AccountRecord, AdminRole, AdminTokenRecord, ApiKeyRecord, Store } from '../../store/store.js';
import { failedAuthLimit } from '../api-hooks.js';
import { consoleSessionOf } from '../console/session-auth.js';

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
 * Every well-formed token counts against its address's failed authentications (the same budget as
 * /v1's, `rate_limits.auth_failures_per_minute`) before its lookup, and a good one gives it back:
 * past the limit, 429 without a lookup.
 */
export function createAdminAuthentication(deps: { store: Store; limiter: Limiter; authFailuresPerMinute: number }): onRequestAsyncHookHandler {
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
    const guard = deps.authFailuresPerMinute > 0 ? failedAuthLimit(deps.limiter, request.ip, deps.authFailuresPerMinute) : undefined;
    await guard?.admit();
    const hash = hashKeySecret(token);
    const found = await deps.store.findAdminTokenByHash(hash);
    if (found === undefined || found.disabled || !hashesEqual(found.hash, hash)) throw new GatewayError('invalid_token');
    await guard?.succeeded();
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
