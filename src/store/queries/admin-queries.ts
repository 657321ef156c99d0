/**
 * Admin tokens, the audit log, and the paginated listings the admin API reads (ledger, audit; the
 * account list is account-activity-queries.ts). Pagination is by keyset (a cursor names the last row seen), so pages stay stable while
 * rows are appended and no query scans what it skips.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type {
  AdminTokenRecord,
  AuditEntry,
  AuditFilter,
  LedgerEntry,
  NewAuditEntry,
  Page,
  PageRequest,
  TimeRange,
} from '../store.js';
import { decodeAdminToken, decodeLedgerEntry, StoreDataError, toDate, toEpochMilliseconds, toNullableText, toSafeNumber, toText } from './row-decoding.js';

export async function createAdminToken(db: Kysely<Database>, token: AdminTokenRecord): Promise<void> {
  await db
    .insertInto('admin_tokens')
    .values({
      id: token.id,
      name: token.name,
      role: token.role,
      prefix: token.prefix,
      hash: token.hash,
      disabled: token.disabled ? 1 : 0,
      created_at: toEpochMilliseconds(token.createdAt, 'createdAt'),
    })
    .execute();
}

export async function listAdminTokens(db: Kysely<Database>): Promise<AdminTokenRecord[]> {
  const rows = await db.selectFrom('admin_tokens').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  return rows.map(decodeAdminToken);
}

export async function findAdminToken(db: Kysely<Database>, idOrPrefix: string): Promise<AdminTokenRecord | undefined> {
  const byId = await db.selectFrom('admin_tokens').selectAll().where('id', '=', idOrPrefix).executeTakeFirst();
  if (byId !== undefined) return decodeAdminToken(byId);
  const byPrefix = await db.selectFrom('admin_tokens').selectAll().where('prefix', '=', idOrPrefix).orderBy('created_at', 'asc').executeTakeFirst();
  return byPrefix === undefined ? undefined : decodeAdminToken(byPrefix);
}

export async function findAdminTokenByHash(db: Kysely<Database>, hash: string): Promise<AdminTokenRecord | undefined> {
  const row = await db.selectFrom('admin_tokens').selectAll().where('hash', '=', hash).executeTakeFirst();
  return row === undefined ? undefined : decodeAdminToken(row);
}

export async function setAdminTokenDisabled(db: Kysely<Database>, tokenId: string, disabled: boolean): Promise<boolean> {
  const updated = await db.updateTable('admin_tokens').set({ disabled: disabled ? 1 : 0 }).where('id', '=', tokenId).executeTakeFirst();
  return updated.numUpdatedRows === 1n;
}

export async function appendAudit(db: Kysely<Database>, entry: NewAuditEntry, at: Date): Promise<AuditEntry> {
  const row = await db
    .insertInto('audit_log')
    .values({
      at: toEpochMilliseconds(at, 'at'),
      admin_token_id: entry.adminTokenId,
      action: entry.action,
      target_type: entry.targetType,
      target_id: entry.targetId,
      before: entry.before === undefined ? null : JSON.stringify(entry.before),
      after: entry.after === undefined ? null : JSON.stringify(entry.after),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { ...entry, id: toSafeNumber(row.id, 'audit_log.id'), at };
}

export async function listAudit(db: Kysely<Database>, filter: AuditFilter, page: PageRequest<number>): Promise<Page<AuditEntry, number>> {
  let query = db.selectFrom('audit_log').selectAll();
  if (filter.targetType !== undefined) query = query.where('target_type', '=', filter.targetType);
  if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId);
  if (filter.from !== undefined) query = query.where('at', '>=', BigInt(toEpochMilliseconds(filter.from, 'from')));
  if (filter.to !== undefined) query = query.where('at', '<', BigInt(toEpochMilliseconds(filter.to, 'to')));
  // Newest first: ids grow with time, so the id orders and pages the log (a cursor is the last id seen).
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  const rows = await query.orderBy('id', 'desc').limit(page.limit + 1).execute();
  return pageOf(rows.map(decodeAudit), page.limit, (entry) => entry.id);
}

export async function listLedgerPage(db: Kysely<Database>, accountId: string, range: TimeRange, page: PageRequest<number>): Promise<Page<LedgerEntry, number>> {
  let query = db.selectFrom('ledger').selectAll().where('account_id', '=', accountId);
  if (range.from !== undefined) query = query.where('created_at', '>=', BigInt(toEpochMilliseconds(range.from, 'from')));
  if (range.to !== undefined) query = query.where('created_at', '<', BigInt(toEpochMilliseconds(range.to, 'to')));
  // Newest first, as the audit log.
  if (page.after !== undefined) query = query.where('id', '<', page.after);
  const rows = await query.orderBy('id', 'desc').limit(page.limit + 1).execute();
  return pageOf(rows.map(decodeLedgerEntry), page.limit, (entry) => entry.id);
}

/** The page of `rows` (read with one row beyond `limit`, to tell whether another page follows). */
export function pageOf<Row, Cursor>(rows: Row[], limit: number, cursorOf: (row: Row) => Cursor): Page<Row, Cursor> {
  if (rows.length <= limit) return { rows };
  const kept = rows.slice(0, limit);
  const last = kept.at(-1);
  return last === undefined ? { rows: kept } : { rows: kept, next: cursorOf(last) };
}

interface AuditRow {
  id: unknown;
  at: unknown;
  admin_token_id: unknown;
  action: unknown;
  target_type: unknown;
  target_id: unknown;
  before: unknown;
  after: unknown;
}

function decodeAudit(row: AuditRow): AuditEntry {
  return {
    id: toSafeNumber(row.id, 'audit_log.id'),
    at: toDate(row.at, 'audit_log.at'),
    adminTokenId: toNullableText(row.admin_token_id, 'audit_log.admin_token_id'),
    action: toText(row.action, 'audit_log.action'),
    targetType: toText(row.target_type, 'audit_log.target_type'),
    targetId: toText(row.target_id, 'audit_log.target_id'),
    before: decodeJson(row.before, 'audit_log.before'),
    after: decodeJson(row.after, 'audit_log.after'),
  };
}

function decodeJson(value: unknown, field: string): unknown {
  const text = toNullableText(value, field);
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new StoreDataError(`${field}: not JSON`);
  }
}
