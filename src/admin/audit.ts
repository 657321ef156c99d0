/**
 * The audit log: who changed what, when, from what to what. Every admin mutation (CLI or HTTP)
 * hands the store an `auditDraft`, and the store writes the row in the change's own transaction
 * (a change is never without its row, nor a row without its change); rows are never edited.
 */
import type { AuditDraft, AuditEntry, AuditFilter, Page, AccountStore } from '../store/store.js';
import { requireOrderedRange } from './input.js';

/**
 * Who makes a change: an admin token (the admin API, with the token as bearer or through its
 * console session), or null for the CLI (whoever holds the database URL). Every service that
 * audits a change takes its actor as a required parameter, never a default, so a caller that
 * forgets it does not compile instead of being recorded as the CLI (docs/architecture.md, The audit log).
 */
export interface Actor {
  adminTokenId: string | null;
}

/** The CLI's actor: passed explicitly by `tollgate` commands (and `tollgate serve`'s demo account). */
export const CLI_ACTOR: Actor = Object.freeze({ adminTokenId: null });

/** The audit row of one change by `actor`, its record shown through `view` before and after. */
export function auditDraft<T>(actor: Actor, action: string, view: (record: T) => object, details?: Record<string, unknown>): AuditDraft<T> {
  return { adminTokenId: actor.adminTokenId, action, view, ...(details === undefined ? {} : { details }) };
}

/** One page of the audit log, newest first, filtered by target and time range (`from` at or before `to`). */
export async function listAudit(store: AccountStore, filter: AuditFilter, page: { limit: number; after?: number }): Promise<Page<AuditEntry, number>> {
  requireOrderedRange(filter.from, filter.to);
  return store.listAudit(filter, page);
}
