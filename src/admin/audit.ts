/**
 * The audit log: who changed what, when, from what to what. Every admin mutation (CLI or HTTP)
 * appends a row through `recordAudit`, right after the change it describes; rows are never edited.
 */
import type { AuditEntry, Page, Store } from '../store/store.js';

/** Who makes a change: an admin token (HTTP), or null for the CLI (whoever holds the database URL). */
export interface Actor {
  adminTokenId: string | null;
}

export const CLI_ACTOR: Actor = Object.freeze({ adminTokenId: null });

export type AuditTargetType = 'account' | 'admin_token';

export async function recordAudit(
  store: Store,
  actor: Actor,
  change: { action: string; targetType: AuditTargetType; targetId: string; before: unknown; after: unknown },
): Promise<AuditEntry> {
  return store.appendAudit({ adminTokenId: actor.adminTokenId, ...change });
}

export async function listAudit(
  store: Store,
  filter: { targetType?: string; targetId?: string },
  page: { limit: number; after?: number },
): Promise<Page<AuditEntry, number>> {
  return store.listAudit(filter, page);
}
