/**
 * `/console/api/self`: the key holder's own data, read-only: their account (balance), their key
 * (limits, expiry, status) and the models the key may use now with their prices. Authenticated by
 * a key holder's console session, or by the key itself as a bearer token (then authenticated and
 * rate-limited exactly as `GET /v1/models` is), so scripts can read it too. Nothing here can name
 * another key or account: the subject comes from the credential alone, and the usage and request
 * log routes are filtered to that key by the server (keys have no "manager" mark that would open
 * the whole account's; a key holder sees only their own key's requests).
 */

const instant = z.string().max(40).optional();
const usageQuery = z.object({ from: instant, to: instant, by: z.enum(['hour', 'day']).default('day') }).strict();
const requestsQuery = z
  .object({
    from: instant,
    to: instant,
    model: z.string().max(200).optional(),
    status: z.coerce.number().int().min(100).max(599).optional(),
    request_id: z.string().max(200).optional(),
    cursor: z.string().max(500).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .strict();

/** The query, checked; a bad one is a 400 in the spec's format, naming the parameter. */
function parseQuery<T extends z.ZodType>(schema: T, query: unknown): z.infer<T> {
  const parsed = schema.safeParse(query);
  if (parsed.success) return parsed.data;
  throw invalidInputError(parsed.error.issues[0]);
}

/** The admin services' refusals (a bad date, a range that ends before it starts) in the spec's format. */
async function asGatewayErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AdminError) throw new GatewayError(error.kind === 'invalid_input' ? 'invalid_request' : error.kind, { message: error.message });
    throw error;
  }
}

function instants(from: string | undefined, to: string | undefined): { from?: Date; to?: Date } {
  return { ...(from === undefined ? {} : { from: parseIsoDate(from, 'from') }), ...(to === undefined ? {} : { to: parseIsoDate(to, 'to') }) };
}
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AdminError } from '../../admin/admin-error.js';
import { parseIsoDate } from '../../admin/input.js';
import { usageReport } from '../../admin/usage.js';
import { searchRequestLog } from '../../admin/request-log.js';
import { getKey } from '../../admin/keys.js';
import { accountView, keyDetailsView, requestLogView, unitPricesView, usageReportView } from '../../admin/views.js';
import type { Authenticator } from '../../auth/authenticator.js';
import { costOfTokens, formatUsd } from '../../billing/money.js';
import { pricesFromConfig } from '../../billing/prices.js';
import type { ConfigFile } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { SURFACE_PATHS } from '../../protocol/canonical.js';
import type { Catalog } from '../../routing/catalog.js';
import type { Limiter } from '../../ratelimit/limiter.js';
import type { Router } from '../../routing/router.js';
import { createApiHooks, requireContext } from '../v1/api-hooks.js';
import { decodeRequestLogCursor, encodeRequestLogCursor } from '../admin/cursor.js';
import { invalidInputError } from '../input-errors.js';
import { modelsForKey } from '../v1/models-route.js';
import { consoleSessionOf, type SessionAuthDeps } from '../session/session-auth.js';
import type { Store } from '../../store/store.js';

export interface SelfRouteDeps extends SessionAuthDeps {
  /** The key holder's own keys, balance, usage and requests. */
  store: Store;
  now: () => number;
  authenticator: Authenticator;
  /** The key's requests window, as on /v1. */
  limiter: Limiter;
  config: ConfigFile;
  catalog: Catalog;
  /** The models of the catalog version served now (server/catalog-runtime.ts), for their prices. */
  catalogModels: () => ConfigFile['models'];
  router: Router;
}

export function registerSelfRoutes(app: FastifyInstance, deps: SelfRouteDeps): void {
  const bearerHooks = createApiHooks({ authenticator: deps.authenticator, authGuards: deps.authGuards, limiter: deps.limiter, rateLimits: deps.config.rate_limits });

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
    // With its budget's current period: what it has spent and has left.
    const now = new Date(deps.now());
    return { account: accountView(account), key: keyDetailsView(await getKey(deps.store, key.id, now), now) };
  });

  app.get('/api/self/models', { onRequest: authenticateKeyHolder }, async (request) => {
    const { key } = keyHolderOf(request);
    const prices = pricesFromConfig(deps.catalogModels());
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
        unit_prices_usd: unitPricesView(price),
        endpoints: [...model.endpoints].map((endpoint) => SURFACE_PATHS[endpoint]),
        reasoning_efforts: [...model.reasoningEfforts],
        max_output_tokens: model.maxOutputTokens,
        // What a request without its own output cap (max_tokens, …) holds for output alone.
        output_hold_usd: formatUsd(costOfTokens(model.maxOutputTokens, price.outputPerMillion)),
      };
    });
    return { data };
  });

  app.get('/api/self/usage', { onRequest: authenticateKeyHolder }, async (request) => {
    const { key } = keyHolderOf(request);
    const query = parseQuery(usageQuery, request.query);
    return asGatewayErrors(async () =>
      usageReportView(await usageReport(deps.store, { keyId: key.id, accountRef: key.accountId, by: query.by, ...instants(query.from, query.to) })),
    );
  });

  app.get('/api/self/requests', { onRequest: authenticateKeyHolder }, async (request) => {
    const { key } = keyHolderOf(request);
    const query = parseQuery(requestsQuery, request.query);
    return asGatewayErrors(async () => {
      const after = decodeRequestLogCursor(query.cursor);
      const search = {
        keyId: key.id,
        accountRef: key.accountId,
        ...instants(query.from, query.to),
        ...(query.model === undefined ? {} : { model: query.model }),
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(query.request_id === undefined ? {} : { requestId: query.request_id }),
      };
      const page = await searchRequestLog(deps.store, search, { limit: query.limit, ...(after === undefined ? {} : { after }) });
      return { data: page.rows.map(requestLogView), has_more: page.next !== undefined, next_cursor: encodeRequestLogCursor(page.next) };
    });
  });
}
