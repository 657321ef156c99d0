/**
 * Web console sessions: an admin token or an API key is exchanged once for a random session id,
 * which the browser keeps in an HTTP-only cookie. Only the id's SHA-256 is stored (with who it
 * stands for and when it ends), so any instance can check it, and a logout ends it everywhere.
 *
 * A session is only as good as its credential: every check reads the admin token, or the key and
 * its account, again, so disabling any of them (or a key expiring) refuses the sessions it opened at
 * once, on every instance. Disabling, rotating or deleting also deletes those sessions, in the same
 * transaction (store/queries/console-session-queries.ts), so enabling the credential again does not bring
 * them back; and a key's session ends no later than the key expires, so a later expiry does not
 * either.
 */
import { randomBytes } from 'node:crypto';
import { ADMIN_TOKEN_PREFIX, hashesEqual, hashKeySecret, KEY_PREFIX } from '../auth/key-secret.js';
import type { AccountRecord, AdminTokenRecord, ApiKeyRecord, AccountStore } from '../store/store.js';
import { findUsableAdminToken } from './admin-tokens.js';

/** How long a console session lasts; logging in again starts a new one. */
export const CONSOLE_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const SESSION_ID_PREFIX = 'tgs_';
/** `tgs_` and 32 random bytes in base64url. */
const SESSION_ID_PATTERN = /^tgs_[A-Za-z0-9_-]{43}$/;

/** Who a session (or a credential being exchanged for one) stands for. */
export type ConsoleSubject =
  | { kind: 'admin'; token: AdminTokenRecord }
  | { kind: 'key'; key: ApiKeyRecord; account: AccountRecord };

export interface OpenedSession {
  /** The secret that goes into the cookie; it is not stored anywhere. */
  sessionId: string;
  subject: ConsoleSubject;
  expiresAt: Date;
}

/**
 * The admin token (`tg-admin-…`) or API key (`sk-tg-…`) `credential` names, if it is usable now;
 * undefined for anything else (made up, disabled, expired, or a disabled account's key).
 */
export async function subjectOfCredential(store: AccountStore, credential: string, now: Date): Promise<ConsoleSubject | undefined> {
  if (credential.length > 200) return undefined;
  if (credential.startsWith(ADMIN_TOKEN_PREFIX)) {
    const token = await findUsableAdminToken(store, credential);
    return token === undefined ? undefined : { kind: 'admin', token };
  }
  if (credential.startsWith(KEY_PREFIX)) {
    const hash = hashKeySecret(credential);
    const found = await store.findKeyByHash(hash);
    if (found === undefined || !hashesEqual(found.key.hash, hash)) return undefined;
    return usableKeyHolder(found.key, found.account, now);
  }
  return undefined;
}

/** Opens a session for `subject`, ending at now + the session TTL, or when its key expires if sooner. */
export async function openConsoleSession(store: AccountStore, subject: ConsoleSubject, now: Date): Promise<OpenedSession> {
  const sessionId = `${SESSION_ID_PREFIX}${randomBytes(32).toString('base64url')}`;
  const keyExpiry = subject.kind === 'key' ? subject.key.expiresAt : null;
  const expiresAt = new Date(Math.min(now.getTime() + CONSOLE_SESSION_TTL_MS, keyExpiry?.getTime() ?? Infinity));
  await store.createConsoleSession({
    hash: hashKeySecret(sessionId),
    kind: subject.kind,
    subjectId: subject.kind === 'admin' ? subject.token.id : subject.key.id,
    createdAt: now,
    expiresAt,
  });
  return { sessionId, subject, expiresAt };
}

/** Whether `value` has the shape of a session id (anything else costs no lookup). */
export function isSessionIdShaped(value: string): boolean {
  return SESSION_ID_PATTERN.test(value);
}

/**
 * Who the session `sessionId` stands for now, with its expiry; undefined when there is no such
 * session, it has expired, or its admin token, key or account is no longer usable.
 */
export async function resolveConsoleSession(store: AccountStore, sessionId: string, now: Date): Promise<{ subject: ConsoleSubject; expiresAt: Date } | undefined> {
  if (!isSessionIdShaped(sessionId)) return undefined;
  const hash = hashKeySecret(sessionId);
  const session = await store.findConsoleSession(hash);
  if (session === undefined || !hashesEqual(session.hash, hash) || session.expiresAt.getTime() <= now.getTime()) return undefined;
  const subject = await currentSubject(store, session.kind, session.subjectId, now);
  return subject === undefined ? undefined : { subject, expiresAt: session.expiresAt };
}

/** Logout: the session is gone for every instance. */
export async function endConsoleSession(store: AccountStore, sessionId: string): Promise<void> {
  if (isSessionIdShaped(sessionId)) await store.deleteConsoleSession(hashKeySecret(sessionId));
}

async function currentSubject(store: AccountStore, kind: 'admin' | 'key', subjectId: string, now: Date): Promise<ConsoleSubject | undefined> {
  if (kind === 'admin') {
    const token = await store.findAdminToken(subjectId);
    return token !== undefined && token.id === subjectId && !token.disabled ? { kind: 'admin', token } : undefined;
  }
  const key = await store.findKey(subjectId);
  if (key === undefined || key.id !== subjectId) return undefined;
  const account = await store.findAccount(key.accountId);
  return account === undefined || account.id !== key.accountId ? undefined : usableKeyHolder(key, account, now);
}

/** The same rule /v1 applies: a key is usable while it and its account are enabled, it has not expired and is not deleted. */
function usableKeyHolder(key: ApiKeyRecord, account: AccountRecord, now: Date): ConsoleSubject | undefined {
  if (key.disabled || key.deletedAt !== undefined || account.disabled) return undefined;
  if (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime()) return undefined;
  return { kind: 'key', key, account };
}
