/** `/admin/v1/alerts/deliveries` (read-only): the webhook outbox, newest first, to see what reached whom. */
import { z } from 'zod';
import type { AlertDelivery } from '../../store/store.js';
import { requireRole } from './auth.js';
import type { AdminApp, AdminRouteDeps } from './context.js';
import { decodeIdCursor, encodeIdCursor } from './cursor.js';
import { errorResponses, pageOf, pageQuery } from './schemas.js';

const deliverySchema = z
  .object({
    id: z.number().int(),
    event_id: z.string().describe('The idempotency id the webhook receives in `Tollgate-Event-Id`.'),
    type: z.string(),
    webhook_id: z.string().describe('`wh_` and the first 16 hex digits of the SHA-256 of the webhook URL.'),
    state: z.enum(['pending', 'delivered', 'abandoned']),
    attempts: z.number().int(),
    next_attempt_at: z.string().nullable().describe('When the next attempt is due (pending only).'),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    last_error: z.string().nullable(),
    event: z.unknown().describe('The body sent to the webhook.'),
  })
  .meta({ id: 'AlertDelivery' });

export function registerAlertRoutes(app: AdminApp, deps: AdminRouteDeps): void {
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
    return { data: page.rows.map(deliveryView), has_more: page.next !== undefined, next_cursor: encodeIdCursor(page.next) };
  });
}

function deliveryView(delivery: AlertDelivery) {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    type: delivery.eventType,
    webhook_id: delivery.webhookId,
    state: delivery.state,
    attempts: delivery.attempts,
    next_attempt_at: delivery.state === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
    created_at: delivery.createdAt.toISOString(),
    finished_at: delivery.finishedAt?.toISOString() ?? null,
    last_error: delivery.lastError,
    event: JSON.parse(delivery.body) as unknown,
  };
}
