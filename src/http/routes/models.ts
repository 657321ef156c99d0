/** GET /v1/models: the models this key may use now, in OpenAI's list shape. */
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { Catalog } from '../../routing/catalog.js';
import type { Router } from '../../routing/router.js';
import { requireContext } from '../api-hooks.js';

const CREATED = Math.floor(Date.UTC(2026, 0, 1) / 1000);

export function registerModelRoutes(app: FastifyInstance, deps: { onRequest: onRequestAsyncHookHandler[]; catalog: Catalog; router: Router }): void {
  app.get('/v1/models', { onRequest: deps.onRequest }, async (request) => {
    const context = requireContext(request);
    const data = [...deps.catalog.values()]
      .filter((model) => model.enabled && deps.router.hasUsableTarget(model))
      .filter((model) => context.key.models === null || context.key.models.includes(model.id))
      .map((model) => ({ id: model.id, object: 'model', created: CREATED, owned_by: 'tollgate' }));
    return { object: 'list', data };
  });
}
