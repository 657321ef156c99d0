/**
 * `/admin/v1/keys`: create, list, get (with what the budget has left), change limits and budget,
 * disable/enable, rotate, delete. The same services as `tollgate keys`, so the two cannot disagree.
 * Secrets are in the create and rotate answers only; every change is audited and makes every
 * instance forget its cached copy of the key.
 */
import { z } from 'zod';
import { parseIsoDate } from '../../admin/input.js';
import { createKey, deleteKey, getKey, listKeysPage, rotateKey, setKeyDisabled, updateKey, type KeyUpdateInput } from '../../admin/keys.js';
import { keyDetailsView, keyView } from '../../admin/views.js';
import { requireRole } from './auth.js';
import { actorOf, type AdminApp, type AdminRouteDeps } from './context.js';
import { decodeAccountCursor, encodeAccountCursor } from './cursor.js';
import { budgetPeriod, errorResponses, errorSchema, keyDetailsSchema, keySchema, keyStatus, pageOf, pageQuery, usdAmount } from './schemas.js';

const tags = ['keys'];
const keyParams = z.object({ key: z.string().min(1).max(200).describe('Key id or prefix (sk-tg-…).') });
const limit = z.number().int().min(1).max(2_147_483_647);

/** The settings a key is created with, and changed through: absent keeps, null clears; an unknown field is refused. */
const keySettings = z.object({
  name: z.string().max(200).nullable().optional(),
  models: z.array(z.string().max(200)).max(1000).nullable().optional().describe('Model ids the key may use; null: every model.'),
  requests_per_window: limit.nullable().optional().describe('Requests per rate-limit window; null: the configured default.'),
  tokens_per_minute: limit.nullable().optional().describe('Tokens per minute; null: the configured default.'),
  expires_at: z.string().max(40).nullable().optional().describe('ISO 8601 date or date-time in the future; null: never.'),
  budget: z
    .object({
      limit_usd: usdAmount,
      period: budgetPeriod.optional().describe("Absent: the key's current period, else total."),
    })
    .strict()
    .nullable()
    .optional()
    .describe('A spend limit; a request it cannot cover is refused with 403 insufficient_user_quota. null: none.'),
}).strict();

const createdKeySchema = keySchema.extend({ key: z.string().describe('The secret: in this answer only.') });

function settingsInput(body: z.infer<typeof keySettings>): KeyUpdateInput {
  const input: KeyUpdateInput = {};
  if (body.name !== undefined) input.name = body.name;
  if (body.models !== undefined) input.models = body.models;
  if (body.requests_per_window !== undefined) input.requestsPerWindow = body.requests_per_window;
  if (body.tokens_per_minute !== undefined) input.tokensPerMinute = body.tokens_per_minute;
  if (body.expires_at !== undefined) input.expiresAt = body.expires_at === null ? null : parseIsoDate(body.expires_at, 'expires_at');
  if (body.budget !== undefined) input.budget = body.budget === null ? null : { limitUsd: body.budget.limit_usd, ...(body.budget.period === undefined ? {} : { period: body.budget.period }) };
  return input;
}

export function registerKeyRoutes(app: AdminApp, deps: AdminRouteDeps): void {
  const { store } = deps;
  const read = { preValidation: requireRole('viewer') };
  const write = { preValidation: requireRole('operator') };

  app.post('/keys', {
    ...write,
    schema: {
      tags,
      summary: 'Create an API key; `key` (the secret) is in this answer only',
      body: keySettings.extend({ account: z.string().min(1).max(200).describe('Account id or name.') }),
      response: { 201: createdKeySchema, ...errorResponses },
    },
  }, async (request, reply) => {
    const { key, secret } = await createKey(store, { accountRef: request.body.account, ...settingsInput(request.body) }, actorOf(request));
    deps.accountsChanged();
    return reply.code(201).send({ ...keyView(key), key: secret });
  });

  app.get('/keys', {
    ...read,
    schema: {
      tags,
      summary: 'List keys, oldest first (deleted ones only with status=deleted)',
      querystring: pageQuery.extend({
        account: z.string().max(200).optional().describe('Only the keys of this account (id or name).'),
        status: keyStatus.optional(),
      }),
      response: { 200: pageOf(keySchema), ...errorResponses },
    },
  }, async (request) => {
    const { limit: pageSize, cursor, account, status } = request.query;
    const now = new Date(deps.now());
    const filter = { ...(account === undefined ? {} : { accountRef: account }), ...(status === undefined ? {} : { status }) };
    const after = decodeAccountCursor(cursor);
    const page = await listKeysPage(store, filter, { limit: pageSize, ...(after === undefined ? {} : { after }) }, now);
    return { data: page.rows.map((key) => keyView(key, now)), has_more: page.next !== undefined, next_cursor: encodeAccountCursor(page.next) };
  });

  app.get('/keys/:key', {
    ...read,
    schema: { tags, summary: 'Get a key, with what its budget has spent and has left in the current period', params: keyParams, response: { 200: keyDetailsSchema, ...errorResponses } },
  }, async (request) => {
    const now = new Date(deps.now());
    return keyDetailsView(await getKey(store, request.params.key, now), now);
  });

  app.patch('/keys/:key', {
    ...write,
    schema: {
      tags,
      summary: "Change a key's name, models, limits, expiry or budget",
      params: keyParams,
      body: keySettings,
      response: { 200: keySchema, 409: errorSchema, ...errorResponses },
    },
  }, async (request) => {
    const key = await updateKey(store, request.params.key, settingsInput(request.body), actorOf(request));
    deps.accountsChanged();
    return keyView(key);
  });

  for (const [action, disabled] of [['disable', true], ['enable', false]] as const) {
    app.post(`/keys/:key/${action}`, {
      ...write,
      schema: {
        tags,
        summary: disabled ? 'Disable a key (refused within a second on every instance)' : 'Enable a key',
        params: keyParams,
        response: { 200: keySchema, 409: errorSchema, ...errorResponses },
      },
    }, async (request) => {
      const key = await setKeyDisabled(store, request.params.key, disabled, actorOf(request));
      deps.accountsChanged();
      return keyView(key);
    });
  }

  app.post('/keys/:key/rotate', {
    ...write,
    schema: {
      tags,
      summary: 'Give a key a new secret (`key`, in this answer only); the old one is refused from then on',
      params: keyParams,
      response: { 200: createdKeySchema, 409: errorSchema, ...errorResponses },
    },
  }, async (request) => {
    const { key, secret } = await rotateKey(store, request.params.key, actorOf(request));
    deps.accountsChanged();
    return { ...keyView(key), key: secret };
  });

  app.delete('/keys/:key', {
    ...write,
    schema: {
      tags,
      summary: 'Delete a key: refused from then on; it stays, with its ledger history, as status deleted',
      params: keyParams,
      response: { 200: keySchema, 409: errorSchema, ...errorResponses },
    },
  }, async (request) => {
    const key = await deleteKey(store, request.params.key, actorOf(request));
    deps.accountsChanged();
    return keyView(key);
  });
}
