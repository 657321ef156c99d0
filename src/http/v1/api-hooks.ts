/**
 * The hooks every API route runs before its body is parsed, in the spec's order: key, then rate
 * limit. Unknown routes never reach them (route comes first). Within the key step, a made-up key
 * from an address past its allowance of failed authentications, or a lookup this process's budget
 * refuses, gets the 429 (auth-guards.ts).
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Authenticator } from '../../auth/authenticator.js';
import type { ConfigFile } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { rateLimitHeaders, retryAfterHeaders } from '../../ratelimit/headers.js';
import type { Limiter, LimitDecision } from '../../ratelimit/limiter.js';
import type { ApiContext } from './api-context.js';
import type { AuthGuards } from '../auth-guards.js';

export function createApiHooks(deps: {
  authenticator: Authenticator;
  authGuards: AuthGuards;
  limiter: Limiter;
  rateLimits: ConfigFile['rate_limits'];
  /** Also take the key from `x-api-key` (Anthropic's header; it wins over `Authorization`, as there). */
  apiKeyHeader?: boolean;
}): onRequestAsyncHookHandler[] {
  const authenticate: onRequestAsyncHookHandler = async (request) => {
    const guard = deps.authGuards.guard('key', request);
    const apiKey = deps.apiKeyHeader === true ? request.headers['x-api-key'] : undefined;
    const credential = typeof apiKey === 'string' && apiKey !== '' ? `Bearer ${apiKey}` : request.headers.authorization;
    const found = await deps.authenticator.authenticate(credential, guard);
    if (found === null) throw new GatewayError('invalid_token');
    const context: ApiContext = {
      ...found,
      requestsPerWindow: found.key.requestsPerWindow ?? deps.rateLimits.requests,
      windowSeconds: deps.rateLimits.window_seconds,
      tokensPerMinute: found.key.tokensPerMinute ?? deps.rateLimits.tokens_per_minute,
    };
    request.apiContext = context;
  };

  const limitRequests: onRequestAsyncHookHandler = async (request, reply) => {
    const context = requireContext(request);
    const decision = await deps.limiter.consume(`req:${context.key.id}`, 1, context.requestsPerWindow, context.windowSeconds);
    applyLimit(reply, 'requests', decision);
  };

  return [authenticate, limitRequests];
}

/** Charges `tokens` to the key's tokens-per-minute window (no-op when the key has none). */
export async function limitTokens(limiter: Limiter, request: FastifyRequest, reply: FastifyReply, tokens: number): Promise<void> {
  const context = requireContext(request);
  if (context.tokensPerMinute <= 0) return;
  // A request larger than the whole window is admitted when the window is fresh (it takes all of
  // it) rather than refused forever.
  const decision = await limiter.consume(`tok:${context.key.id}`, Math.min(tokens, context.tokensPerMinute), context.tokensPerMinute, 60);
  applyLimit(reply, 'tokens', decision);
}

function applyLimit(reply: FastifyReply, kind: 'requests' | 'tokens', decision: LimitDecision): void {
  const headers = rateLimitHeaders(kind, decision);
  reply.headers(headers);
  if (!decision.allowed) throw new GatewayError('rate_limited', { headers: { ...headers, ...retryAfterHeaders(decision) } });
}

export function requireContext(request: FastifyRequest): ApiContext {
  if (request.apiContext === null) throw new Error('API route reached without its authentication hook');
  return request.apiContext;
}
