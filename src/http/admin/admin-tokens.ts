/** `/admin/v1/admin-tokens` (owner only): create, list, disable, enable. */
import { z } from 'zod';
import { createAdminToken, listAdminTokens, setAdminTokenDisabled } from '../../admin/admin-tokens.js';
import { adminTokenView } from '../../admin/views.js';
import { requireRole } from './auth.js';
import { actorOf, type AdminApp, type AdminRouteDeps } from './context.js';
import { adminRole, adminTokenSchema, errorResponses } from './schemas.js';

const tags = ['admin tokens'];
const tokenParams = z.object({ token: z.string().min(1).max(200).describe('Admin token id or prefix.') });

export function registerAdminTokenRoutes(app: AdminApp, deps: AdminRouteDeps): void {
  const { store } = deps;
  const owner = { preValidation: requireRole('owner') };

  app.post('/admin-tokens', {
    ...owner,
    schema: {
      tags,
      summary: 'Create an admin token; `token` (the secret) is in this answer only',
      body: z.object({ role: adminRole, name: z.string().max(100).optional() }).strict(),
      response: { 201: adminTokenSchema.extend({ token: z.string() }), ...errorResponses },
    },
  }, async (request, reply) => {
    const { token, secret } = await createAdminToken(store, request.body, actorOf(request));
    return reply.code(201).send({ ...adminTokenView(token), token: secret });
  });

  app.get('/admin-tokens', {
    ...owner,
    schema: { tags, summary: 'List admin tokens (prefixes, never secrets)', response: { 200: z.object({ data: z.array(adminTokenSchema) }), ...errorResponses } },
  }, async () => ({ data: (await listAdminTokens(store)).map(adminTokenView) }));

  for (const [action, disabled] of [['disable', true], ['enable', false]] as const) {
    app.post(`/admin-tokens/:token/${action}`, {
      ...owner,
      schema: { tags, summary: `${disabled ? 'Disable' : 'Enable'} an admin token`, params: tokenParams, response: { 200: adminTokenSchema, ...errorResponses } },
    }, async (request) => adminTokenView(await setAdminTokenDisabled(store, request.params.token, disabled, actorOf(request))));
  }
}
