/**
 * Web console sessions (migration 0010). A session is found by the SHA-256 of its id; expired rows
 * are deleted whenever a new session is opened, so the table stays small without a timer.
 */
import type { Kysely } from 'kysely';
import { StoreDataError, toDate, toEpochMilliseconds, toText } from './row-decoding.js';
import type { Database } from '../schema.js';
import type { ConsoleSessionKind, ConsoleSessionRecord } from '../store.js';

export async function createConsoleSession(db: Kysely<Database>, session: ConsoleSessionRecord): Promise<void> {
  const createdAt = toEpochMilliseconds(session.createdAt, 'createdAt');
  await db.deleteFrom('console_sessions').where('expires_at', '<=', BigInt(createdAt)).execute();
  await db
    .insertInto('console_sessions')
    .values({
      hash: session.hash,
      kind: session.kind,
      subject_id: session.subjectId,
      created_at: createdAt,
      expires_at: toEpochMilliseconds(session.expiresAt, 'expiresAt'),
    })
    .execute();
}

export async function findConsoleSession(db: Kysely<Database>, hash: string): Promise<ConsoleSessionRecord | undefined> {
  const row = await db.selectFrom('console_sessions').selectAll().where('hash', '=', hash).executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    hash: toText(row.hash, 'console_sessions.hash'),
    kind: toKind(row.kind),
    subjectId: toText(row.subject_id, 'console_sessions.subject_id'),
    createdAt: toDate(row.created_at, 'console_sessions.created_at'),
    expiresAt: toDate(row.expires_at, 'console_sessions.expires_at'),
  };
}

export async function deleteConsoleSession(db: Kysely<Database>, hash: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('hash', '=', hash).execute();
}

/*
 * Ending the sessions a credential opened, in the transaction that disables, rotates or deletes it:
 * a check of the credential alone would refuse them only while it stays disabled, and enabling it
 * again would bring back every session it had (a cookie left in some browser included).
 */

/** Ends the sessions opened with a key (its disabling, rotation or deletion). */
export async function endKeySessions(transaction: Kysely<Database>, keyId: string): Promise<void> {
  await transaction.deleteFrom('console_sessions').where('kind', '=', 'key').where('subject_id', '=', keyId).execute();
}

/** Ends the sessions opened with any key of an account (its disabling). */
export async function endAccountSessions(transaction: Kysely<Database>, accountId: string): Promise<void> {
  await transaction
    .deleteFrom('console_sessions')
    .where('kind', '=', 'key')
    .where('subject_id', 'in', transaction.selectFrom('api_keys').select('id').where('account_id', '=', accountId))
    .execute();
}

/** Ends the sessions opened with an admin token (its disabling). */
export async function endAdminTokenSessions(transaction: Kysely<Database>, tokenId: string): Promise<void> {
  await transaction.deleteFrom('console_sessions').where('kind', '=', 'admin').where('subject_id', '=', tokenId).execute();
}

function toKind(value: unknown): ConsoleSessionKind {
  if (value === 'admin' || value === 'key') return value;
  throw new StoreDataError(`console_sessions.kind: expected admin or key, got ${JSON.stringify(value)}`);
}
