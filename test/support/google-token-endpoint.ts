/**
 * Google's OAuth2 token endpoint as a service account meets it (docs/wire-protocols.md §19.2), for
 * upstream doubles: a key pair made for the test and its key file (`type: service_account`, its
 * `token_uri` the double's), and the handler of `POST token_uri` with
 * `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>`. The JWT is checked as
 * Google checks it: RS256, signed by the account's key (verified with its public key), `iss` the
 * account's email, `aud` the token endpoint, a `scope`, `iat` not in the future and `exp` not past
 * and at most an hour after `iat`. Refusals are Google's (`400 invalid_grant`, `invalid_scope`,
 * `401 invalid_client`). Issued tokens live `tokenLifeSeconds`. Test-only code.
 */
import { generateKeyPairSync, randomUUID, verify, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The address Google's own libraries put in `aud`, which Google's endpoint takes as well as its own. */
export const GOOGLE_PUBLIC_TOKEN_URL = 'https://oauth2.googleapis.com/token';
/** Leeway Google allows on `iat` for clocks that run ahead. */
const CLOCK_SKEW_SECONDS = 300;

export interface ServiceAccount {
  clientEmail: string;
  publicKey: KeyObject;
  /** The key file's content. */
  keyJson: Record<string, string>;
  /** Where the key file was written. */
  keyFile: string;
}

/** A new service account of `project`: an RSA key pair and its key file, `token_uri` set. */
export function makeServiceAccount(project: string, tokenUri: string): ServiceAccount {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientEmail = `tollgate-test@${project}.iam.gserviceaccount.com`;
  const keyJson = {
    type: 'service_account',
    project_id: project,
    private_key_id: randomUUID().replaceAll('-', ''),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    client_id: '109876543210987654321',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: tokenUri,
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(clientEmail)}`,
    universe_domain: 'googleapis.com',
  };
  const keyFile = join(mkdtempSync(join(tmpdir(), 'tollgate-vertex-')), 'service-account.json');
  writeFileSync(keyFile, JSON.stringify(keyJson, null, 2), { mode: 0o600 });
  return { clientEmail, publicKey, keyJson, keyFile };
}

/** One JWT the endpoint was shown, decoded, and whether it passed. */
export interface TokenRequest {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  accepted: boolean;
}

export interface TokenEndpointOptions {
  account: ServiceAccount;
  /** The `aud` values taken: the endpoint's own address, and Google's public one when a client library sends that. */
  audiences: readonly string[];
  /** The scope every token must carry. */
  scope: string;
  /** The `expires_in` of issued tokens (seconds). */
  tokenLifeSeconds: number;
}

/** The state of a token endpoint: what it was asked, what it issued, whether it refuses everyone. */
export class TokenEndpoint {
  readonly requests: TokenRequest[] = [];
  /** Issued tokens, in order, with when each expires (ms since epoch). */
  readonly issued = new Map<string, number>();
  readonly issuedAt: number[] = [];
  refusing = false;
  readonly #options: TokenEndpointOptions;

  constructor(options: TokenEndpointOptions) {
    this.#options = options;
  }

  /** Whether `authorization` carries a token this endpoint issued that still lives. */
  accepts(authorization: string | undefined): boolean {
    const bearer = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
    const expiresAt = bearer === undefined ? undefined : this.issued.get(bearer);
    return expiresAt !== undefined && Date.now() < expiresAt;
  }

  /** Answers one POST to the token endpoint, its form body given. */
  answer(response: ServerResponse, form: URLSearchParams): void {
    const refuse = (status: number, error: string, description: string, header: Record<string, unknown> = {}, claims: Record<string, unknown> = {}): void => {
      this.requests.push({ header, claims, accepted: false });
      send(response, status, { error, error_description: description });
    };
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      refuse(400, 'unsupported_grant_type', 'Invalid grant_type: ' + String(form.get('grant_type')));
      return;
    }
    const parts = (form.get('assertion') ?? '').split('.');
    const [headerPart, claimsPart, signaturePart] = parts;
    const header = parts.length === 3 ? decode(headerPart!) : undefined;
    const claims = parts.length === 3 ? decode(claimsPart!) : undefined;
    if (header === undefined || claims === undefined) {
      refuse(400, 'invalid_request', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
      return;
    }
    const signed = verify('RSA-SHA256', Buffer.from(`${headerPart}.${claimsPart}`), this.#options.account.publicKey, Buffer.from(signaturePart!, 'base64url'));
    if (header.alg !== 'RS256' || !signed) {
      refuse(400, 'invalid_grant', 'Invalid JWT Signature.', header, claims);
      return;
    }
    if (claims.iss !== this.#options.account.clientEmail) {
      refuse(401, 'invalid_client', 'The OAuth client was not found.', header, claims);
      return;
    }
    if (typeof claims.aud !== 'string' || !this.#options.audiences.includes(claims.aud)) {
      refuse(400, 'invalid_grant', 'Invalid JWT: Failed audience check. The right audience is ' + this.#options.audiences[0], header, claims);
      return;
    }
    const now = Math.floor(Date.now() / 1_000);
    const issuedAt = Number(claims.iat);
    const expiresAt = Number(claims.exp);
    if (!Number.isSafeInteger(issuedAt) || !Number.isSafeInteger(expiresAt) || issuedAt > now + CLOCK_SKEW_SECONDS || expiresAt <= now || expiresAt - issuedAt > 3_600) {
      refuse(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.', header, claims);
      return;
    }
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
    if (!scopes.includes(this.#options.scope)) {
      refuse(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.', header, claims);
      return;
    }
    if (this.refusing) {
      refuse(400, 'invalid_grant', 'Invalid grant: account not found', header, claims);
      return;
    }
    this.requests.push({ header, claims, accepted: true });
    const life = this.#options.tokenLifeSeconds;
    const token = `ya29.c.double-${this.issued.size + 1}-${randomUUID()}`;
    this.issuedAt.push(Date.now());
    this.issued.set(token, Date.now() + life * 1_000);
    send(response, 200, { access_token: token, expires_in: life, token_type: 'Bearer' });
  }
}

function decode(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  response.end(JSON.stringify(body));
}

/**
 * A token endpoint alone on loopback, for suites whose upstream double knows nothing of tokens (the
 * conformance table's replaying doubles): its account's key file names it as `token_uri`. The
 * server does not keep the process alive; `close` stops it.
 */
export async function startTokenServer(project: string, scope: string): Promise<{ account: ServiceAccount; tokens: TokenEndpoint; close: () => Promise<void> }> {
  const { createServer } = await import('node:http');
  const { listenOnLoopback } = await import('./loopback-server.js');
  // Made once the server listens: its audience is the server's own address.
  const endpoint: { tokens?: TokenEndpoint } = {};
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url !== '/token' || request.method !== 'POST') {
        send(response, 404, { error: 'not_found' });
        return;
      }
      endpoint.tokens!.answer(response, new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  server.unref();
  const account = makeServiceAccount(project, `${origin}/token`);
  const tokens = new TokenEndpoint({ account, audiences: [`${origin}/token`], scope, tokenLifeSeconds: 3_599 });
  endpoint.tokens = tokens;
  return { account, tokens, close };
}
