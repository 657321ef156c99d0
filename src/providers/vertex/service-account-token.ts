/**
 * OAuth2 access tokens for a Google service account (docs/wire-protocols.md §19.2), the way
 * Google's own libraries get them: a JWT (RS256, signed with the key file's private key) claiming
 * `iss` = the account's email, `scope` = the scopes, `aud` = the token endpoint, `iat` and `exp`
 * (an hour later), POSTed as `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=…`
 * to the key file's own `token_uri`, whose answer's `access_token` goes upstream as a bearer.
 * Google's auth library (10.x) posts to Google's public address whatever the file says, so the
 * exchange is made here, and the file's address is honoured (private clouds, test doubles).
 * Kept, renewed and failed as every OAuth2 token is (shared/oauth-token-source.ts): a refusal is a
 * `credentials` failure naming the endpoint's `error` and `error_description`, and no message
 * holds the key, the JWT, a token, nor the endpoint's address.
 */
import { sign } from 'node:crypto';
import type { TimeoutsConfig } from '../../config/schema.js';
import { OAuthTokenSource } from '../shared/oauth-token-source.js';
import type { ServiceAccountKey } from './credentials-file.js';

/** How long the JWT claims to be good for: Google accepts at most an hour. */
const ASSERTION_LIFE_SECONDS = 3_600;

export interface ServiceAccountTokenOptions {
  /** `vertex provider "<name>"`, for messages. */
  label: string;
  key: ServiceAccountKey;
  scopes: readonly string[];
  /** The longest wait for the token endpoint's answer. */
  timeoutMs: number;
  timeouts: TimeoutsConfig;
  /** The clock a token's expiry is read on (ms since epoch); the system clock by default. */
  now?: () => number;
}

/** The signed JWT a service account presents to the token endpoint (RFC 7523). */
export function signedAssertion(key: ServiceAccountKey, scopes: readonly string[], nowMs: number): string {
  const issuedAt = Math.floor(nowMs / 1_000);
  const header = { alg: 'RS256', typ: 'JWT', ...(key.privateKeyId === undefined ? {} : { kid: key.privateKeyId }) };
  const claims = { iss: key.clientEmail, scope: scopes.join(' '), aud: key.tokenUri, iat: issuedAt, exp: issuedAt + ASSERTION_LIFE_SECONDS };
  const signed = `${base64url(header)}.${base64url(claims)}`;
  return `${signed}.${sign('RSA-SHA256', Buffer.from(signed), key.privateKey).toString('base64url')}`;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A service account's tokens, its JWT exchanged at the key file's own `token_uri`. */
export class ServiceAccountTokenSource extends OAuthTokenSource {
  constructor(options: ServiceAccountTokenOptions) {
    super({
      label: options.label,
      endpointName: "the service account's token endpoint",
      grantName: 'its JWT',
      tokenUrl: options.key.tokenUri,
      // The JWT's times are the system's: the token endpoint checks them against its own clock.
      form: () => new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signedAssertion(options.key, options.scopes, Date.now()) }),
      timeoutMs: options.timeoutMs,
      timeouts: options.timeouts,
      ...(options.now === undefined ? {} : { now: options.now }),
    });
  }
}
