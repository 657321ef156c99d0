/**
 * Catalog versions (migration 0014; docs/architecture.md, "The catalog at runtime"): append-only,
 * the highest id is the catalog served. A new version and its audit row are written in one
 * transaction; its id is the previous highest plus one, so two concurrent writers collide on the
 * primary key and the second is refused rather than silently ordered.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { CatalogVersionRecord, NewCatalogVersion } from '../store.js';
import { appendAudit } from './admin-queries.js';
import { toNullableText, toSafeNumber, toText } from './row-decoding.js';

export async function latestCatalogVersionId(db: Kysely<Database>): Promise<number | null> {
  const row = await db.selectFrom('catalog_versions').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  return row?.id === null || row?.id === undefined ? null : toSafeNumber(row.id, 'catalog_versions.id');
}

export async function findCatalogVersion(db: Kysely<Database>, id: number): Promise<CatalogVersionRecord | undefined> {
  const row = await db.selectFrom('catalog_versions').selectAll().where('id', '=', BigInt(id)).executeTakeFirst();
  return row === undefined ? undefined : decode(row);
}

/** Newest first, at most `limit`, those below `before` when given. */
export async function listCatalogVersions(db: Kysely<Database>, limit: number, before?: number): Promise<CatalogVersionRecord[]> {
  let query = db.selectFrom('catalog_versions').selectAll();
  if (before !== undefined) query = query.where('id', '<', BigInt(before));
  const rows = await query.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(decode);
}

/**
 * Appends a version after the newest (or as version 1 with `onlyIfEmpty`, which writes nothing
 * when a version exists: the file's seed, which two starting instances may both try).
 */
export async function appendCatalogVersion(transaction: Kysely<Database>, version: NewCatalogVersion, at: Date, onlyIfEmpty = false): Promise<CatalogVersionRecord | undefined> {
  const latest = await latestCatalogVersionId(transaction);
  if (onlyIfEmpty && latest !== null) return undefined;
  const id = (latest ?? 0) + 1;
  const row = {
    id: BigInt(id),
    document: JSON.stringify(version.document),
    secrets: version.secrets === null ? null : JSON.stringify(version.secrets),
    note: version.note,
    admin_token_id: version.adminTokenId,
    created_at: BigInt(at.getTime()),
  };
  const insert = transaction.insertInto('catalog_versions').values(row);
  const inserted = await (onlyIfEmpty ? insert.onConflict((conflict) => conflict.column('id').doNothing()) : insert).executeTakeFirst();
  if (onlyIfEmpty && (inserted.numInsertedOrUpdatedRows ?? 0n) === 0n) return undefined;
  if (version.audit !== undefined) {
    await appendAudit(
      transaction,
      { adminTokenId: version.adminTokenId, action: version.audit.action, targetType: 'catalog', targetId: String(id), before: version.audit.before, after: { ...version.audit.after, version: id } },
      at,
    );
  }
  return { id, document: version.document, secrets: version.secrets, note: version.note, adminTokenId: version.adminTokenId, createdAt: at };
}

function decode(row: { id: unknown; document: unknown; secrets: unknown; note: unknown; admin_token_id: unknown; created_at: unknown }): CatalogVersionRecord {
  const secrets = toNullableText(row.secrets, 'catalog_versions.secrets');
  return {
    id: toSafeNumber(row.id, 'catalog_versions.id'),
    document: JSON.parse(toText(row.document, 'catalog_versions.document')) as unknown,
    secrets: secrets === null ? null : (JSON.parse(secrets) as Record<string, string>),
    note: toNullableText(row.note, 'catalog_versions.note'),
    adminTokenId: toNullableText(row.admin_token_id, 'catalog_versions.admin_token_id'),
    createdAt: new Date(toSafeNumber(row.created_at, 'catalog_versions.created_at')),
  };
}
