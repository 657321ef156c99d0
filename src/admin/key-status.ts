/**
 * A key's status (active, disabled, expired, deleted), worked out from its record: shown in its
 * view (views.ts), printed by the CLI, and the filter of a key list.
 */
import type { ApiKeyRecord, KeyStatus } from '../store/store.js';
import { AdminError } from './admin-error.js';

export const KEY_STATUSES: readonly KeyStatus[] = ['active', 'disabled', 'expired', 'deleted'];

/** What a key is at `now`: deleted wins over disabled, disabled over expired. */
export function keyStatus(key: ApiKeyRecord, now: Date = new Date()): KeyStatus {
  if (key.deletedAt !== undefined) return 'deleted';
  if (key.disabled) return 'disabled';
  if (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

export function parseKeyStatus(value: string): KeyStatus {
  const status = KEY_STATUSES.find((candidate) => candidate === value.trim());
  if (status === undefined) throw new AdminError('invalid_input', `status must be one of ${KEY_STATUSES.join(', ')} (got ${JSON.stringify(value)})`);
  return status;
}
