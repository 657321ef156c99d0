/** `/admin/v1/audit`: the audit log, newest first, filtered by target and time range. */
import { z } from 'zod';
import { listAudit } from '../../admin/audit.js';
import { auditEntryView } from '../../admin/views.js';
import { requireRole } from './auth.js';
import type { AdminApp, AdminRouteDeps } from './context.js';
import { decodeIdCursor, encodeIdCursor } from './cursor.js';
import { instants, timeRangeQuery } from './requests.js';
import { auditEntrySchema, errorResponses, pageOf, pageQuery } from './schemas.js';

export function registerAuditRoutes(app: AdminApp, deps: AdminRouteDeps): void {
  app.get('/audit', {
    preValidation: requireRole('viewer'),
    schema: {
      tags: ['audit'],
      summary: 'Read the audit log, newest first: every admin change, who made it, before and after',
      querystring: pageQuery.extend({
        target_type: z.enum(['account', 'admin_token', 'key', 'target', 'alert_delivery', 'catalog']).optional(),
        target_id: z.string().max(200).optional(),
        ...timeRangeQuery,
      }),
      response: { 200: pageOf(auditEntrySchema), ...errorResponses },
    },
  }, async (request) => {
    const { limit, cursor, target_type: targetType, target_id: targetId, from, to } = request.query;
    const filter = { ...(targetType === undefined ? {} : { targetType }), ...(targetId === undefined ? {} : { targetId }), ...instants(from, to) };
    const page = await listAudit(deps.store, filter, { limit, after: decodeIdCursor(cursor) });
    return { data: page.rows.map(auditEntryView), has_more: page.next !== undefined, next_cursor: encodeIdCursor(page.next) };
  });
}
