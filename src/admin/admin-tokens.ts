/**
 * Admin tokens: the credentials of the admin API, kept apart from API keys (their own prefix and
 * table) so that neither opens the other's door. Created with a role; the secret is returned once
 * and only its SHA-256 hash is stored. Shared by the CLI and the admin HTTP routes.
 */
import { ADMIN_TOKEN_PREFIX, displayPrefix, generateKeySecret, hashesEqual, hashKeySecret, newId } from '../auth/key-secret.js';
import type { AdminRole, AdminTokenRecord, AccountStore } from '../store/store.js';
import { AdminError } from './admin-error.js';
import { auditDraft, type Actor } from './audit.js';
import { adminTokenView } from './views.js';

export const ADMIN_ROLES: readonly AdminRole[] = ['owner', 'operator', 'viewer'];
const MAX_NAME_LENGTH = 100;
/** `tg-admin-` and four characters of the secret. */
const ADMIN_DISPLAY_PREFIX_LENGTH = ADMIN_TOKEN_PREFIX.length + 4;

export function parseAdminRole(value: string): AdminRole {
  const role = ADMIN_ROLES.find((candidate) => candidate === value.trim());
  if (role === undefined) throw new AdminError('invalid_input', `role must be one of ${ADMIN_ROLES.join(', ')} (got ${JSON.stringify(value)})`);
  return role;
}

export async function createAdminToken(
  store: AccountStore,
  input: { role: string; name?: string | null },
  actor: Actor,
): Promise<{ token: AdminTokenRecord; secret: string }> {
  const role = parseAdminRole(input.role);
  const name = input.name === undefined || input.name === null ? null : input.name.trim();
  if (name !== null && (name === '' || name.length > MAX_NAME_LENGTH)) {
    throw new AdminError('invalid_input', `name must be 1 to ${MAX_NAME_LENGTH} characters`);
  }
  const secret = generateKeySecret(ADMIN_TOKEN_PREFIX);
  const token: AdminTokenRecord = {
    id: newId('adm'),
    name,
    role,
    prefix: displayPrefix(secret, ADMIN_DISPLAY_PREFIX_LENGTH),
    hash: hashKeySecret(secret),
    disabled: false,
    createdAt: new Date(),
  };
  await store.createAdminToken(token, auditDraft(actor, 'admin_token.create', adminTokenView));
  return { token, secret };
}

export async function listAdminTokens(store: AccountStore): Promise<AdminTokenRecord[]> {
  return store.listAdminTokens();
}

/** The enabled admin token whose secret is `secret`, if any: looked up by its hash, compared in constant time. */
export async function findUsableAdminToken(store: AccountStore, secret: string): Promise<AdminTokenRecord | undefined> {
  const hash = hashKeySecret(secret);
  const token = await store.findAdminTokenByHash(hash);
  return token !== undefined && !token.disabled && hashesEqual(token.hash, hash) ? token : undefined;
}

export async function requireAdminToken(store: AccountStore, reference: string): Promise<AdminTokenRecord> {
  const text = reference.trim();
  const token = text === '' ? undefined : await store.findAdminToken(text);
  if (token === undefined) throw new AdminError('not_found', `no admin token with id or prefix ${JSON.stringify(reference)}`);
  return token;
}

export async function setAdminTokenDisabled(store: AccountStore, reference: string, disabled: boolean, actor: Actor): Promise<AdminTokenRecord> {
  const before = await requireAdminToken(store, reference);
  await store.setAdminTokenDisabled(before.id, disabled, auditDraft(actor, disabled ? 'admin_token.disable' : 'admin_token.enable', adminTokenView));
  return requireAdminToken(store, before.id);
}
