/**
 * The catalog at runtime through the admin API (docs/architecture.md, "The catalog at runtime";
 * README, "Catalog at runtime"): the document served now (export), a whole new document (a new
 * version), the versions newest first with what each changed, one version's document, and a
 * rollback (a new version equal to an older one). Changes are the operator's and audited with the
 * versions before and after; in file mode (`catalog.source: file`) they answer 409.
 */
import { z } from 'zod';
import { diffCatalogs } from '../../admin/catalog-document.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { requireRole } from './auth.js';
import { actorOf, type AdminApp, type AdminRouteDeps } from './context.js';
import { errorResponses, errorSchema } from './schemas.js';

const names = z.object({ added: z.array(z.string()), removed: z.array(z.string()), changed: z.array(z.string()) });
const diffSchema = z
  .object({ providers: names, models: names, prices_changed: z.array(z.string()).describe('Models in both versions whose prices differ.') })
  .describe('What changed from the version before: provider names and model ids added, removed and changed.')
  .meta({ id: 'CatalogDiff' });

const documentSchema = z
  .record(z.string(), z.unknown())
  .describe('The catalog document: `providers` and `models` as in the config file (README, "The catalog"). A provider of type openai, anthropic, gemini or azure may give `api_key` (its upstream secret, stored sealed and never shown again; `"[stored]"` keeps the stored one).');

const versionSchema = z
  .object({
    id: z.number().int(),
    created_at: z.string(),
    admin_token_id: z.string().nullable().describe('Who made it; null for the file\'s seed.'),
    note: z.string().nullable(),
    diff: diffSchema,
  })
  .meta({ id: 'CatalogVersion' });

const changeSchema = z.object({ version: z.number().int(), previous: z.number().int().nullable(), diff: diffSchema }).meta({ id: 'CatalogChange' });

const conflict = { 409: errorSchema };

export function registerCatalogVersionRoutes(app: AdminApp, deps: AdminRouteDeps): void {
  const control = deps.catalogControl;

  app.get('/catalog/document', {
    preValidation: requireRole('viewer'),
    schema: {
      tags: ['catalog'],
      summary: 'The catalog document served now (export; secrets shown as "[stored]")',
      response: { 200: z.object({ version: z.number().int().nullable().describe('Null in file mode.'), source: z.enum(['database', 'file']), document: documentSchema }), ...errorResponses },
    },
  }, async () => {
    const current = control.current();
    return { version: current.version, source: control.source, document: current.document as Record<string, unknown> };
  });

  app.put('/catalog/document', {
    preValidation: requireRole('operator'),
    schema: {
      tags: ['catalog'],
      summary: 'Replace the catalog: a new version, served by every instance within a second (operator)',
      description:
        'Validated by the config file\'s schema: a 400 names the first bad field (`param`, e.g. `models[0].prices.input`). Requests in flight finish on the version they started with. Audited as `catalog.put` with the versions before and after and what changed. 409 in file mode, or when an `api_key` is given and `TOLLGATE_SECRETS_KEY` is unset.',
      body: z.object({ document: documentSchema, note: z.string().max(500).optional().describe('Why, shown in the version list.') }).strict(),
      response: { 200: changeSchema, ...errorResponses, ...conflict },
    },
  }, async (request) => control.put(request.body.document, actorOf(request), request.body.note ?? null));

  app.get('/catalog/versions', {
    preValidation: requireRole('viewer'),
    schema: {
      tags: ['catalog'],
      summary: 'Catalog versions, newest first, each with what it changed',
      querystring: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50), before: z.coerce.number().int().positive().optional().describe('Versions below this id (the next page).') }),
      response: { 200: z.object({ data: z.array(versionSchema) }), ...errorResponses },
    },
  }, async (request) => {
    // One more than asked, so that the oldest listed has its predecessor to diff against.
    const rows = await deps.store.listCatalogVersions(request.query.limit + 1, request.query.before);
    const listed = rows.slice(0, request.query.limit);
    const data = await Promise.all(
      listed.map(async (row, index) => {
        const predecessor = rows[index + 1] ?? (row.id > 1 ? await deps.store.findCatalogVersion(row.id - 1) : undefined);
        return { id: row.id, created_at: row.createdAt.toISOString(), admin_token_id: row.adminTokenId, note: row.note, diff: diffCatalogs(predecessor?.document, row.document) };
      }),
    );
    return { data };
  });

  app.get('/catalog/versions/:id', {
    preValidation: requireRole('viewer'),
    schema: {
      tags: ['catalog'],
      summary: 'One catalog version: its document (secrets shown as "[stored]") and what it changed',
      params: z.object({ id: z.coerce.number().int().positive() }),
      response: { 200: versionSchema.extend({ document: documentSchema }), ...errorResponses },
    },
  }, async (request) => {
    const row = await deps.store.findCatalogVersion(request.params.id);
    if (row === undefined) throw new GatewayError('not_found', { message: `No catalog version ${request.params.id}.`, param: 'id' });
    const predecessor = row.id > 1 ? await deps.store.findCatalogVersion(row.id - 1) : undefined;
    return { id: row.id, created_at: row.createdAt.toISOString(), admin_token_id: row.adminTokenId, note: row.note, diff: diffCatalogs(predecessor?.document, row.document), document: row.document as Record<string, unknown> };
  });

  app.post('/catalog/versions/:id/rollback', {
    preValidation: requireRole('operator'),
    schema: {
      tags: ['catalog'],
      summary: 'Roll back: a new version equal to this one (operator)',
      description: 'Audited as `catalog.rollback` with the versions before and after. 409 in file mode.',
      params: z.object({ id: z.coerce.number().int().positive() }),
      response: { 200: changeSchema, ...errorResponses, ...conflict },
    },
  }, async (request) => {
    const change = await control.rollback(request.params.id, actorOf(request));
    if (change === undefined) throw new GatewayError('not_found', { message: `No catalog version ${request.params.id}.`, param: 'id' });
    return change;
  });
}
