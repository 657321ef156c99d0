/** `/admin/v1/audit`: the audit log, oldest first, filtered by target. */
import { z } from 'zod';
import { listAudit } from '../../admin/audit.js';
import { auditEntryView } from '../../admin/views.js';
import { requireRole } from './auth.js';
import type { AdminApp, AdminRouteDeps } from './context.js';
import { decodeIdCursor, encodeIdCursor } from './cursor.js';
import { auditEntrySchema, errorResponses, pageOf, pageQuery } from './schemas.js';

export function registerAuditRoutes(app: AdminApp, deps: AdminRouteDeps): void {
  app.get('/audit', {
    preValidation: requireRole('viewer'),
    schema: {
      tags: ['audit'],
      summary: 'Read the audit log: every admin change, who made it, before and after',
      querystring: pageQuery.extend({
        target_type: z.enum(['account', 'admin_token', 'key', 'alert_delivery']).optional(),
        target_id: z.string().max(200).optional(),
      }),
      response: { 200: pageOf(auditEntrySchema), ...errorResponses },
    },
  }, async (request) => {
    const { limit, cursor, target_type: targetType, target_id: targetId } = request.query;
    const page = await listAudit(deps.store, { targetType, targetId }, { limit, after: decodeIdCursor(cursor) });
    return { data: page.rows.map(auditEntryView), has_more: page.next !== undefined, next_cursor: encodeIdCursor(page.next) };
  });
}
