/**
 * `/admin/v1/catalog` (read-only): the models with their prices and reasoning efforts, and every
 * target with its live health as the instance that answers sees it (health is kept in memory per
 * process: another instance, or another worker, may see a target differently), and each pooled
 * upstream key's state by its name (docs/architecture.md, "Pools of upstream keys").
 */
import { z } from 'zod';
import { formatUsd } from '../../billing/money.js';
import { pricesFromConfig } from '../../billing/prices.js';
import { unitPricesView } from '../../admin/views.js';
import { REASONING_EFFORTS, SURFACE_PATHS } from '../../protocol/canonical.js';
import type { Target } from '../../routing/catalog.js';
import { requireRole } from './auth.js';
import type { AdminApp, AdminRouteDeps } from './context.js';
import { errorResponses } from './schemas.js';

const perMillion = z.string().describe('USD per 1M tokens, decimal.');

const catalogModelSchema = z
  .object({
    id: z.string(),
    enabled: z.boolean(),
    prices: z.object({ input_usd: perMillion, cached_input_usd: perMillion, cache_write_usd: perMillion, output_usd: perMillion }),
    unit_prices_usd: z
      .object({
        image_input_per_million: z.string().optional(),
        per_image: z.record(z.string(), z.string()).optional().describe('By tier: `<size>/<quality>`, `<size>`, `default`.'),
        per_audio_second: z.string().optional(),
        per_million_characters: z.string().optional(),
      })
      .describe('What the model bills each beyond tokens (USD, decimal); absent keys: no such price.'),
    endpoints: z.array(z.string()).describe('The `/v1` endpoints the model serves (their paths).'),
    reasoning_efforts: z.array(z.enum(REASONING_EFFORTS)),
    max_output_tokens: z.number().int(),
    hosted_tools: z.enum(['drop', 'refuse', 'map']),
    targets: z
      .array(z.object({ target: z.string().describe('`provider/model`, as in `targets`.'), priority: z.number().int(), weight: z.number().int() }))
      .describe('In priority order (lower first); within a priority, traffic is split by weight.'),
  })
  .meta({ id: 'CatalogModel' });

const catalogTargetSchema = z
  .object({
    target: z.string().describe('`provider/model`: the provider\'s name in the catalog and the upstream\'s model name.'),
    provider: z.string(),
    provider_type: z.string(),
    model: z.string(),
    status: z
      .enum(['healthy', 'cooling_down', 'recovering'])
      .describe('`cooling_down`: skipped until `cooling_until`; `recovering`: tried again after a cool-down, not answered since.'),
    cooling_until: z.string().nullable(),
    cause: z.enum(['failures', 'credentials']).nullable().describe('Why it is cooling down: failures in a row, or its provider refused our key (every target of that provider is out).'),
    consecutive_failures: z.number().int(),
  })
  .meta({ id: 'CatalogTarget' });

const upstreamKeySchema = z
  .object({
    provider: z.string(),
    key: z.string().describe('The key\'s name in the provider\'s `api_keys` (never its secret).'),
    state: z
      .enum(['ok', 'cooling', 'refused'])
      .describe('`cooling`: the upstream answered 429, skipped until `cooling_until`; `refused`: the upstream refused it (401, 403), out of the pool until the gateway restarts.'),
    cooling_until: z.string().nullable(),
    calls: z.number().int().describe('Upstream calls sent with it since this process started.'),
  })
  .meta({ id: 'UpstreamKey' });

const catalogSchema = z.object({
  models: z.array(catalogModelSchema),
  targets: z.array(catalogTargetSchema),
  upstream_keys: z.array(upstreamKeySchema).describe('The keys of every provider that has a pool (`api_keys`), as the answering instance sees them.'),
  observed_at: z.string().describe('When the answering instance read its target health.'),
});

export function registerCatalogRoutes(app: AdminApp, deps: AdminRouteDeps): void {
  const prices = pricesFromConfig(deps.config.models);
  const providerTypes = new Map(deps.config.providers.map((provider) => [provider.name, provider.type]));

  app.get('/catalog', {
    preValidation: requireRole('viewer'),
    schema: {
      tags: ['catalog'],
      summary: 'Models with prices and efforts; targets with their live health (read-only)',
      description:
        'Target health is kept in memory by each gateway process: this is what the instance (worker) that answered sees, and another instance may see a target differently. It changes with traffic: a target that keeps failing cools down, and comes back when it answers again.',
      response: { 200: catalogSchema, ...errorResponses },
    },
  }, async () => {
    const targets = new Map<string, Target>();
    const models = [...deps.catalog.values()].map((model) => {
      const price = prices.get(model.id);
      if (price === undefined) throw new Error(`no prices for catalog model ${model.id}`);
      for (const target of model.targets) targets.set(target.label, target);
      return {
        id: model.id,
        enabled: model.enabled,
        prices: {
          input_usd: formatUsd(price.inputPerMillion),
          cached_input_usd: formatUsd(price.cachedInputPerMillion),
          cache_write_usd: formatUsd(price.cacheWritePerMillion ?? price.inputPerMillion),
          output_usd: formatUsd(price.outputPerMillion),
        },
        unit_prices_usd: unitPricesView(price),
        endpoints: [...model.endpoints].map((endpoint) => SURFACE_PATHS[endpoint]),
        reasoning_efforts: REASONING_EFFORTS.filter((effort) => model.reasoningEfforts.has(effort)),
        max_output_tokens: model.maxOutputTokens,
        hosted_tools: model.hostedTools,
        targets: [...model.targets].sort((a, b) => a.priority - b.priority).map((target) => ({ target: target.label, priority: target.priority, weight: target.weight })),
      };
    });
    return {
      models,
      targets: [...targets.values()].map((target) => {
        const health = deps.router.health(target);
        return {
          target: target.label,
          provider: target.provider.name,
          provider_type: providerTypes.get(target.provider.name) ?? 'unknown',
          model: target.upstreamModel,
          status: health.status,
          cooling_until: health.coolingUntil === null ? null : new Date(health.coolingUntil).toISOString(),
          cause: health.cause,
          consecutive_failures: health.consecutiveFailures,
        };
      }),
      upstream_keys: [...new Set([...targets.values()].map((target) => target.provider))].flatMap((provider) =>
        (provider.upstreamKeys?.list() ?? []).map((key) => ({
          provider: provider.name,
          key: key.name,
          state: key.state,
          cooling_until: key.coolingUntil === null ? null : new Date(key.coolingUntil).toISOString(),
          calls: key.calls,
        })),
      ),
      observed_at: new Date(deps.now()).toISOString(),
    };
  });
}
