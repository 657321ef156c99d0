/**
 * Runs an admin change and its audit row in one transaction: the record is read before the change
 * (locked on PostgreSQL, so a concurrent change waits and the before image is the one it changed;
 * SQLite's write transactions are serialised already) and after it, and both go into the row.
 */
import type { Kysely } from 'kysely';
import { appendAudit } from './admin-queries.js';
import { decodeAccount, decodeAdminToken, decodeApiKey } from './row-decoding.js';
import type { Database, StoreEngine } from '../schema.js';
import type { AccountRecord, AdminTokenRecord, ApiKeyRecord, AuditDraft } from '../store.js';

type Reader<T> = (transaction: Kysely<Database>, engine: StoreEngine, id: string) => Promise<T | undefined>;

export const readAccount: Reader<AccountRecord> = async (transaction, engine, id) => {
  const query = transaction.selectFrom('accounts').selectAll().where('id', '=', id);
  const row = await (engine === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  return row === undefined ? undefined : decodeAccount(row);
};

export const readAdminToken: Reader<AdminTokenRecord> = async (transaction, engine, id) => {
  const query = transaction.selectFrom('admin_tokens').selectAll().where('id', '=', id);
  const row = await (engine === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  return row === undefined ? undefined : decodeAdminToken(row);
};

/**
 * `FOR NO KEY UPDATE` rather than `FOR UPDATE`: holds and charges reference the key (foreign keys
 * take a key-share lock on it), and a key change must not block them or deadlock with them.
 */
export const readKey: Reader<ApiKeyRecord> = async (transaction, engine, id) => {
  const query = transaction.selectFrom('api_keys').selectAll().where('id', '=', id);
  const row = await (engine === 'postgres' ? query.forNoKeyUpdate() : query).executeTakeFirst();
  return row === undefined ? undefined : decodeApiKey(row);
};

/**
 * `change` returns whether it changed anything; only then is the audit row written. Returns what
 * `change` returned.
 */
export async function auditedChange<T>(
  transaction: Kysely<Database>,
  target: { engine: StoreEngine; type: 'account' | 'admin_token' | 'key'; id: string; read: Reader<T> },
  audit: AuditDraft<T> | undefined,
  at: Date,
  change: () => Promise<boolean>,
): Promise<boolean> {
  if (audit === undefined) return change();
  const before = await target.read(transaction, target.engine, target.id);
  if (!(await change())) return false;
  const after = await target.read(transaction, target.engine, target.id);
  await appendAudit(
    transaction,
    {
      adminTokenId: audit.adminTokenId,
      action: audit.action,
      targetType: target.type,
      targetId: target.id,
      before: before === undefined ? null : audit.view(before),
      after: after === undefined ? null : { ...audit.view(after), ...audit.details },
    },
    at,
  );
  return true;
}
