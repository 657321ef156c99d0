/**
 * `/console/api/self`: the key holder's own data, read-only: their account (balance), their key
 * (limits, expiry, status) and the models the key may use now with their prices. Authenticated by
 * a key holder's console session, or by the key itself as a bearer token (then authenticated and
 * rate-limited exactly as `GET /v1/models` is), so scripts can read it too. Nothing here can name
 * another key or account: the subject comes from the credential alone.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountView, keyView } from '../../admin/views.js';
import type { Authenticator } from '../../auth/authenticator.js';
import { formatUsd } from '../../billing/money.js';
import { pricesFromConfig } from '../../billing/prices.js';
import type { ConfigFile } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Catalog } from '../../routing/catalog.js';
import type { Router } from '../../routing/router.js';
import { createApiHooks, requireContext } from '../api-hooks.js';
import { modelsForKey } from '../routes/models.js';
import { consoleSessionOf, type SessionAuthDeps } from './session-auth.js';

export interface SelfRouteDeps extends SessionAuthDeps {
  now: () => number;
  authenticator: Authenticator;
  config: ConfigFile;
  catalog: Catalog;
  router: Router;
}

export function registerSelfRoutes(app: FastifyInstance, deps: SelfRouteDeps): void {
  const bearerHooks = createApiHooks({ authenticator: deps.authenticator, limiter: deps.limiter, rateLimits: deps.config.rate_limits });
  const prices = pricesFromConfig(deps.config.models);

  async function authenticateKeyHolder(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (request.headers.authorization !== undefined) {
      for (const hook of bearerHooks) await hook.call(this, request, reply);
      const { key, account } = requireContext(request);
      request.consoleKeyHolder = { key, account };
      return;
    }
    const session = await consoleSessionOf(request, deps);
    if (session === null) throw new GatewayError('invalid_token');
    if (session.subject.kind !== 'key') {
      throw new GatewayError('forbidden', { message: "These are a key holder's own pages: sign in with an API key to read them." });
    }
    request.consoleKeyHolder = { key: session.subject.key, account: session.subject.account };
  }

  function keyHolderOf(request: FastifyRequest): NonNullable<FastifyRequest['consoleKeyHolder']> {
    if (request.consoleKeyHolder === null) throw new Error('self route reached without its authentication hook');
    return request.consoleKeyHolder;
  }

  app.get('/api/self', { onRequest: authenticateKeyHolder }, async (request) => {
    const { key } = keyHolderOf(request);
    // The balance now, not the one cached with the key for /v1's authentication.
    const account = await deps.store.findAccount(key.accountId);
    if (account === undefined || account.id !== key.accountId) throw new GatewayError('invalid_token');
    return { account: accountView(account), key: keyView(key, new Date(deps.now())) };
  });

  app.get('/api/self/models', { onRequest: authenticateKeyHolder }, async (request) => {
    const { key } = keyHolderOf(request);
    const data = modelsForKey(deps.catalog, deps.router, key.models).map((model) => {
      const price = prices.get(model.id);
      if (price === undefined) throw new Error(`model ${model.id} has no prices`);
      return {
        id: model.id,
        // USD per 1M tokens, as exact decimal strings (like every amount the admin API answers).
        prices_usd_per_million_tokens: {
          input: formatUsd(price.inputPerMillion),
          cached_input: formatUsd(price.cachedInputPerMillion),
          cache_write: formatUsd(price.cacheWritePerMillion ?? price.inputPerMillion),
          output: formatUsd(price.outputPerMillion),
        },
        reasoning_efforts: [...model.reasoningEfforts],
        max_output_tokens: model.maxOutputTokens,
      };
    });
    return { data };
  });
}
