/**
 * GET /v1/models: the models this key may use now, in OpenAI's list shape, or in Anthropic's when
 * the client is one of Anthropic's (it sends `anthropic-version`; Claude Code's gateway model
 * discovery does). GET /v1/models/{id}: one of them, or OpenAI's 404 `model_not_found` for a model
 * the key may not use now, whether or not it exists (docs/wire-protocols.md §12).
 */
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.js';
import { clipEcho } from '../../protocol/client-echo.js';
import { SURFACE_PATHS, type Surface } from '../../protocol/canonical.js';
import type { Catalog, ModelEntry } from '../../routing/catalog.js';
import type { Router } from '../../routing/router.js';
import { requireContext } from './api-hooks.js';

const CREATED = Math.floor(Date.UTC(2026, 0, 1) / 1000);

/** Whether a key may use `model` now: enabled, allowed by the key's model list (null: all), with a usable target. */
function usableByKey(model: ModelEntry, router: Router, keyModels: readonly string[] | null): boolean {
  return model.enabled && (keyModels === null || keyModels.includes(model.id)) && router.hasUsableTarget(model);
}

/** The models a key may use now. */
export function modelsForKey(catalog: Catalog, router: Router, keyModels: readonly string[] | null): ModelEntry[] {
  return [...catalog.values()].filter((model) => usableByKey(model, router, keyModels));
}

/** The catalog model `id`, when the key may use it now (what /v1 answers with, and what it lists). */
export function modelForKey(catalog: Catalog, router: Router, keyModels: readonly string[] | null, id: string): ModelEntry | undefined {
  const model = catalog.get(id);
  return model !== undefined && usableByKey(model, router, keyModels) ? model : undefined;
}

/**
 * `model` when it serves `surface` (catalog `endpoints`); otherwise OpenAI's 404 `model_not_found`
 * naming the endpoint, answered before anything is held or forwarded (docs/wire-protocols.md §13).
 */
export function requireEndpoint(model: ModelEntry, surface: Surface): ModelEntry {
  if (model.endpoints.has(surface)) return model;
  const message = `The model '${clipEcho(model.id)}' does not serve ${SURFACE_PATHS[surface]}.`;
  throw new GatewayError('not_found', { message, param: 'model', code: 'model_not_found' });
}

/**
 * One model as the client's vendor writes it. OpenAI's shape also lists the endpoints it serves
 * (`endpoints`, paths as the client calls them): a field OpenAI's own objects lack, which its
 * clients keep as an extra property.
 */
function modelObject(request: FastifyRequest, model: ModelEntry): Record<string, unknown> {
  const id = model.id;
  if (request.headers['anthropic-version'] !== undefined) {
    return { type: 'model', id, display_name: id, created_at: new Date(CREATED * 1000).toISOString() };
  }
  return { id, object: 'model', created: CREATED, owned_by: 'tollgate', endpoints: [...model.endpoints].map((surface) => SURFACE_PATHS[surface]) };
}

export function registerModelRoutes(app: FastifyInstance, deps: { onRequest: onRequestAsyncHookHandler[]; catalog: Catalog; router: Router }): void {
  app.get('/v1/models', { onRequest: deps.onRequest }, async (request) => {
    const context = requireContext(request);
    const data = modelsForKey(deps.catalog, deps.router, context.key.models).map((model) => modelObject(request, model));
    if (request.headers['anthropic-version'] !== undefined) {
      return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    }
    return { object: 'list', data };
  });
  app.get<{ Params: { model: string } }>('/v1/models/:model', { onRequest: deps.onRequest }, async (request) => {
    const context = requireContext(request);
    const id = request.params.model;
    const model = modelForKey(deps.catalog, deps.router, context.key.models, id);
    if (model === undefined) {
      const message = `The model '${clipEcho(id)}' does not exist or you do not have access to it.`;
      throw new GatewayError('not_found', { message, param: null, code: 'model_not_found' });
    }
    return modelObject(request, model);
  });
}
