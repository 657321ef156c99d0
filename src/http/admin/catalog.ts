/**
 * `/admin/v1/catalog`: the models with their prices and reasoning efforts, and every target with
 * its live health as the instance that answers sees it (health is kept in memory per process:
 * another instance, or another worker, may see a target differently), and each pooled upstream
 * key's state by its name (docs/architecture.md, "Pools of upstream keys"). And the one action on
 * it: an operator's test of one target (routing/target-test.ts), audited, billed to nobody.
 */
import { z } from 'zod';
import { formatUsd } from '../../billing/money.js';
import { pricesFromConfig } from '../../billing/prices.js';
import { unitPricesView } from '../../admin/views.js';
import { REASONING_EFFORTS, SURFACE_PATHS } from '../../protocol/canonical.js';
import type { Target } from '../../routing/catalog.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { testTarget, type TargetTestResult } from '../../routing/target-test.js';
import { requireRole } from './auth.js';
import { actorOf, type AdminApp, type AdminRouteDeps } from './context.js';
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

const targetTestSchema = z
  .object({
    model: z.string(),
    index: z.number().int().describe('The target\'s place in the model\'s `targets` as `GET /catalog` lists them (priority order, from 0).'),
    target: z.string().describe('`provider/model`.'),
    status: z.enum(['ok', 'failed']),
    latency_ms: z.number().int().describe('From sending the request to the end of the answer (or the failure).'),
    first_token_ms: z.number().int().nullable().describe('From sending the request to its first output; null when none came.'),
    upstream_status: z.number().int().nullable().describe('The upstream\'s HTTP status: 200 once it accepted the call, its error status when it refused it; null when it never answered (connection failure, timeout).'),
    error: z
      .object({ kind: z.string().describe('`connect`, `timeout`, `status`, `protocol`, `credentials`, or the code of a failure inside the stream.'), message: z.string().describe('As the gateway logs it: no upstream address, no credential.') })
      .nullable(),
    usage: z
      .object({ input_tokens: z.number().int(), cached_input_tokens: z.number().int(), output_tokens: z.number().int(), reasoning_tokens: z.number().int() })
      .nullable()
      .describe('What the upstream reported; null when it reported nothing. Nobody is billed for it.'),
    text: z.string().describe('The answer\'s text (at most 200 characters).'),
    tested_at: z.string(),
  })
  .meta({ id: 'TargetTest' });

export function registerCatalogRoutes(app: AdminApp, deps: AdminRouteDeps): void {

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
    // The version served now (docs/architecture.md, "The catalog at runtime").
    const served = deps.catalogControl.current().catalog;
    const prices = pricesFromConfig(served.models);
    const providerTypes = new Map(served.providers.map((provider) => [provider.name, provider.type]));
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

  app.post('/catalog/models/:model/targets/:index/test', {
    preValidation: requireRole('operator'),
    schema: {
      tags: ['catalog'],
      summary: 'Test one target of a model: "Say OK" sent through it alone, billed to nobody (operator)',
      description:
        "Sends a minimal request (\"Say OK\", at most 16 output tokens) through exactly this target: no failover, the target's own timeouts. Answers whether it worked, how long the answer and its first output took, the upstream's status and error (redacted as the gateway logs it) and the usage it reported. Nobody is billed (no hold, no ledger entry, no request-log row) and the target's health is left as it was. Audited as `target.test`, with its result.",
      params: z.object({ model: z.string().min(1).max(200), index: z.coerce.number().int().min(0).max(1_000) }),
      response: { 200: targetTestSchema, ...errorResponses },
    },
  }, async (request) => {
    const model = deps.catalog.get(request.params.model);
    if (model === undefined) throw new GatewayError('not_found', { message: `No catalog model ${JSON.stringify(request.params.model)}.`, param: 'model' });
    const target = [...model.targets].sort((a, b) => a.priority - b.priority)[request.params.index];
    if (target === undefined) throw new GatewayError('not_found', { message: `Model ${model.id} has ${model.targets.length} target(s); there is none at index ${request.params.index}.`, param: 'index' });
    const testedAt = new Date(deps.now()).toISOString();
    const result = await testTarget(model, target, { requestId: request.id });
    const view = targetTestView(model.id, request.params.index, target.label, result, testedAt);
    await deps.store.recordAudit({
      adminTokenId: actorOf(request).adminTokenId,
      action: 'target.test',
      targetType: 'target',
      targetId: target.label,
      before: null,
      after: { model: view.model, index: view.index, status: view.status, latency_ms: view.latency_ms, first_token_ms: view.first_token_ms, upstream_status: view.upstream_status, error: view.error },
    });
    return view;
  });
}

function targetTestView(model: string, index: number, target: string, result: TargetTestResult, testedAt: string) {
  const usage = result.usage;
  return {
    model,
    index,
    target,
    status: result.status,
    latency_ms: result.latencyMs,
    first_token_ms: result.firstTokenMs,
    upstream_status: result.upstreamStatus,
    error: result.error,
    usage: usage === null ? null : { input_tokens: usage.inputTokens, cached_input_tokens: usage.cachedInputTokens, output_tokens: usage.outputTokens, reasoning_tokens: usage.reasoningTokens },
    text: result.text,
    tested_at: testedAt,
  };
}
