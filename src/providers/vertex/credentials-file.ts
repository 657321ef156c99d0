/**
 * A Google credentials file (docs/wire-protocols.md §19.2), read once at startup: a service
 * account's key (`type: service_account`), whose JWT the gateway signs itself and sends to the
 * file's own `token_uri`, or any other kind (`authorized_user`, `external_account`, …), which goes
 * to Google's auth library as it is. A file that cannot be read or lacks a field is a startup
 * error naming the file and the field, never its content.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isRecord, parseJson } from '../../lib/json-value.js';

/** Google's token endpoint, for a key file that names none (Google's own files always do). */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

export interface ServiceAccountKey {
  kind: 'service_account';
  clientEmail: string;
  privateKey: KeyObject;
  /** Sent as the JWT header's `kid`, when the file has one. */
  privateKeyId: string | undefined;
  /** Where the signed JWT is exchanged for an access token: the file's `token_uri`. */
  tokenUri: string;
}

/** Any other credentials file: Google's auth library reads it. */
export interface OtherCredentials {
  kind: 'other';
  json: Record<string, unknown>;
}

export type GoogleCredentials = ServiceAccountKey | OtherCredentials;

/** Reads and checks the file at `path`; `label` names the provider in messages. */
export function readCredentialsFile(path: string, label: string): GoogleCredentials {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = isRecord(error) && typeof error.code === 'string' ? error.code : 'unreadable';
    throw new Error(`${label}: cannot read its credentials file ${path} (${code})`);
  }
  const parsed = parseJson(text);
  if (!parsed.ok || !isRecord(parsed.value)) throw new Error(`${label}: its credentials file ${path} is not a JSON object`);
  const json = parsed.value;
  if (json.type !== 'service_account') return { kind: 'other', json };
  const field = (name: string): string => {
    const value = json[name];
    if (typeof value !== 'string' || value.trim() === '') throw new Error(`${label}: its service-account key file ${path} has no ${name}`);
    return value;
  };
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(field('private_key'));
  } catch (error) {
    if (error instanceof Error && error.message.startsWith(label)) throw error;
    throw new Error(`${label}: the private_key of its service-account key file ${path} is not a PEM private key`);
  }
  if (privateKey.asymmetricKeyType !== 'rsa') throw new Error(`${label}: the private_key of its service-account key file ${path} is not an RSA key`);
  const tokenUri = json.token_uri === undefined ? GOOGLE_TOKEN_URI : field('token_uri');
  if (!URL.canParse(tokenUri) || !/^https?:$/.test(new URL(tokenUri).protocol)) throw new Error(`${label}: the token_uri of its service-account key file ${path} is not an http(s) address`);
  return {
    kind: 'service_account',
    clientEmail: field('client_email'),
    privateKey,
    privateKeyId: typeof json.private_key_id === 'string' && json.private_key_id !== '' ? json.private_key_id : undefined,
    tokenUri,
  };
}
