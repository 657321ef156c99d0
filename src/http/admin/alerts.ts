/**
 * `/admin/v1/alerts/deliveries`: the webhook outbox, newest first, to see what reached whom (each
 * row named by its webhook's format and origin, never its URL, which may hold a secret), and
 * `POST …/{id}/resend` (operators, audited) to queue one again as a new delivery.
 */
import { z } from 'zod';
import { AdminError } from '../../admin/admin-error.js';
import { newEventId, webhookIdOf } from '../../alerts/alert-events.js';
import type { AlertDelivery } from '../../store/store.js';
import { requireRole } from './auth.js';
import { actorOf, type AdminApp, type AdminRouteDeps } from './context.js';
import { decodeIdCursor, encodeIdCursor } from './cursor.js';
import { errorResponses, pageOf, pageQuery } from './schemas.js';

const deliverySchema = z
  .object({
    id: z.number().int(),
    event_id: z.string().describe('The idempotency id the webhook receives in `Tollgate-Event-Id`.'),
    type: z.string(),
    webhook_id: z.string().describe('`wh_` and the first 16 hex digits of the SHA-256 of the webhook URL.'),
    destination: z
      .object({ format: z.string(), origin: z.string() })
      .nullable()
      .describe("The webhook's format and its URL's scheme, host and port (never its path); null when the catalog no longer has it."),
    state: z.enum(['pending', 'delivered', 'abandoned']),
    attempts: z.number().int().describe('Attempts made so far (1 is the first try; more are retries).'),
    next_attempt_at: z.string().nullable().describe('When the next attempt is due (pending only).'),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    last_error: z.string().nullable(),
    last_http_status: z.number().int().nullable().describe("The receiver's HTTP status on the last failed attempt; null when it answered 2xx, was not reached, or nothing was tried yet."),
    resend_of: z.string().nullable().describe('The event id this delivery sends again (a resend), else null.'),
    event: z.unknown().describe('The event envelope (for a chat format, the message is rendered from it).'),
  })
  .meta({ id: 'AlertDelivery' });

export function registerAlertRoutes(app: AdminApp, deps: AdminRouteDeps): void {
  const destinations = new Map(deps.config.alerts.webhooks.map((webhook) => [webhookIdOf(webhook.url), { format: webhook.format, origin: new URL(webhook.url).origin }]));
  const view = (delivery: AlertDelivery) => deliveryView(delivery, destinations.get(delivery.webhookId) ?? null);

  app.get('/alerts/deliveries', {
    preValidation: requireRole('viewer'),
    schema: {
      tags: ['alerts'],
      summary: 'Webhook deliveries, newest first: pending, delivered, or given up',
      querystring: pageQuery.extend({ state: z.enum(['pending', 'delivered', 'abandoned']).optional() }),
      response: { 200: pageOf(deliverySchema), ...errorResponses },
    },
  }, async (request) => {
    const { limit, cursor, state } = request.query;
    const page = await deps.store.listAlertDeliveries({ state }, { limit, after: decodeIdCursor(cursor) });
    return { data: page.rows.map(view), has_more: page.next !== undefined, next_cursor: encodeIdCursor(page.next) };
  });

  app.post('/alerts/deliveries/:id/resend', {
    preValidation: requireRole('operator'),
    schema: {
      tags: ['alerts'],
      summary: 'Send a delivery again: a new delivery of the same event to the same webhook, with a new event id (`resend_of` names the first); audited',
      params: z.object({ id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) }),
      response: { 201: deliverySchema, ...errorResponses },
    },
  }, async (request, reply) => {
    const copy = await deps.store.resendAlertDelivery({ id: request.params.id, eventId: newEventId(), adminTokenId: actorOf(request).adminTokenId });
    if (copy === undefined) throw new AdminError('not_found', `no alert delivery with id ${request.params.id}`);
    return reply.code(201).send(view(copy));
  });
}

function deliveryView(delivery: AlertDelivery, destination: { format: string; origin: string } | null) {
  const event = JSON.parse(delivery.body) as Record<string, unknown>;
  const status = delivery.state === 'delivered' ? null : /answered HTTP (\d{3})/.exec(delivery.lastError ?? '')?.[1];
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    type: delivery.eventType,
    webhook_id: delivery.webhookId,
    destination,
    state: delivery.state,
    attempts: delivery.attempts,
    next_attempt_at: delivery.state === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
    created_at: delivery.createdAt.toISOString(),
    finished_at: delivery.finishedAt?.toISOString() ?? null,
    last_error: delivery.lastError,
    last_http_status: status === undefined || status === null ? null : Number(status),
    resend_of: typeof event.resend_of === 'string' ? event.resend_of : null,
    event,
  };
}
