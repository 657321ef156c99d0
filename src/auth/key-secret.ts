/**
 * API key secrets: `sk-tg-` followed by 40 base62 characters (≈238 bits). Stored only as a SHA-256
 * hash; the prefix (first 12 characters) is kept to tell keys apart in listings.
 */
import { hash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'sk-tg-';
/** Admin tokens (admin API only) look nothing like API keys, so neither is accepted for the other. */
export const ADMIN_TOKEN_PREFIX = 'tg-admin-';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40;
const DISPLAY_PREFIX_LENGTH = 12;

export function generateKeySecret(prefix: string = KEY_PREFIX): string {
  let out = prefix;
  while (out.length < prefix.length + SECRET_LENGTH) {
    for (const byte of randomBytes(64)) {
      // Rejection sampling keeps every character equally likely (248 = 4 × 62).
      if (byte < 248 && out.length < prefix.length + SECRET_LENGTH) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** Lowercase hex SHA-256 of the whole secret (one call per request: the one-shot form, no Hash object). */
export function hashKeySecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function displayPrefix(secret: string, length: number = DISPLAY_PREFIX_LENGTH): string {
  return secret.slice(0, length);
}

/**
 * Equality of two hashes (as hashKeySecret writes them) in a time that does not depend on where
 * they differ: every character is compared, without decoding either into a buffer.
 */
export function hashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length || a.length === 0) return false;
  let difference = 0;
  for (let index = 0; index < a.length; index += 1) difference |= a.charCodeAt(index) ^ b.charCodeAt(index);
  return difference === 0;
}

/** Random ids like `acct_3fQ…`, for records (not secrets). */
export function newId(prefix: string, length = 20): string {
  let out = `${prefix}_`;
  for (const byte of randomBytes(length * 2)) {
    if (byte < 248 && out.length < prefix.length + 1 + length) out += ALPHABET[byte % 62];
  }
  return out;
}
