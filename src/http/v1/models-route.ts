/**
 * GET /v1/models: the models this key may use now, in OpenAI's list shape, or in Anthropic's when
 * the client is one of Anthropic's (it sends `anthropic-version`; Claude Code's gateway model
 * discovery does).
 */
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { Catalog, ModelEntry } from '../../routing/catalog.js';
import type { Router } from '../../routing/router.js';
import { requireContext } from './api-hooks.js';

const CREATED = Math.floor(Date.UTC(2026, 0, 1) / 1000);

/** The models a key may use now: enabled, with a usable target, and allowed by its model list (null: all). */
export function modelsForKey(catalog: Catalog, router: Router, keyModels: readonly string[] | null): ModelEntry[] {
  return [...catalog.values()]
    .filter((model) => model.enabled && router.hasUsableTarget(model))
    .filter((model) => keyModels === null || keyModels.includes(model.id));
}

export function registerModelRoutes(app: FastifyInstance, deps: { onRequest: onRequestAsyncHookHandler[]; catalog: Catalog; router: Router }): void {
  app.get('/v1/models', { onRequest: deps.onRequest }, async (request) => {
    const context = requireContext(request);
    const data = modelsForKey(deps.catalog, deps.router, context.key.models);
    if (request.headers['anthropic-version'] !== undefined) {
      const created = new Date(CREATED * 1000).toISOString();
      const models = data.map((model) => ({ type: 'model', id: model.id, display_name: model.id, created_at: created }));
      return { data: models, has_more: false, first_id: models[0]?.id ?? null, last_id: models.at(-1)?.id ?? null };
    }
    return { object: 'list', data: data.map((model) => ({ id: model.id, object: 'model', created: CREATED, owned_by: 'tollgate' })) };
  });
}
