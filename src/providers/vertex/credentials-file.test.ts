/**
 * Reading a Google credentials file at startup, and signing a service account's JWT: every file the
 * gateway cannot use is an error that names the file and the field, never its content; a JWT
 * carries what Google checks and verifies against the account's public key.
 */
import { verify } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeServiceAccount } from '../../../test/support/google-token-endpoint.js';
import { GOOGLE_TOKEN_URI, readCredentialsFile } from './credentials-file.js';
import { signedAssertion } from './service-account-token.js';
import { modelMethodPath, vertexBaseUrl } from './vertex-paths.js';

const folder = mkdtempSync(join(tmpdir(), 'tollgate-credentials-'));
function file(name: string, content: string): string {
  const path = join(folder, name);
  writeFileSync(path, content);
  return path;
}

describe('readCredentialsFile', () => {
  const account = makeServiceAccount('tollgate-unit', 'https://oauth2.example.internal/token');

  it("reads a service account's key, its token_uri included", () => {
    const key = readCredentialsFile(account.keyFile, 'p');
    expect(key).toMatchObject({ kind: 'service_account', clientEmail: account.clientEmail, privateKeyId: account.keyJson.private_key_id, tokenUri: 'https://oauth2.example.internal/token' });
    const { token_uri: _dropped, ...withoutUri } = account.keyJson;
    expect(readCredentialsFile(file('no-uri.json', JSON.stringify(withoutUri)), 'p')).toMatchObject({ tokenUri: GOOGLE_TOKEN_URI });
  });

  it('hands any other kind of file to the auth library as it is', () => {
    const user = { type: 'authorized_user', client_id: 'id', client_secret: 'shh', refresh_token: 'r' };
    expect(readCredentialsFile(file('user.json', JSON.stringify(user)), 'p')).toEqual({ kind: 'other', json: user });
  });

  it('refuses what it cannot use, naming the file and the field but never the content', () => {
    const label = 'vertex provider "v"';
    const cases: Array<[string, string]> = [
      [join(folder, 'missing.json'), `${label}: cannot read its credentials file ${join(folder, 'missing.json')} (ENOENT)`],
      [file('garbage.json', 'not json'), `${label}: its credentials file ${join(folder, 'garbage.json')} is not a JSON object`],
      [file('no-email.json', JSON.stringify({ ...account.keyJson, client_email: '' })), `${label}: its service-account key file ${join(folder, 'no-email.json')} has no client_email`],
      [file('bad-key.json', JSON.stringify({ ...account.keyJson, private_key: '-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n' })), `${label}: the private_key of its service-account key file ${join(folder, 'bad-key.json')} is not a PEM private key`],
      [file('bad-uri.json', JSON.stringify({ ...account.keyJson, token_uri: 'file:///etc/passwd' })), `${label}: the token_uri of its service-account key file ${join(folder, 'bad-uri.json')} is not an http(s) address`],
    ];
    for (const [path, message] of cases) expect(() => readCredentialsFile(path, label)).toThrow(message);
  });
});

describe('signedAssertion', () => {
  it('is an RS256 JWT with the claims Google checks, verified by the public key', () => {
    const account = makeServiceAccount('tollgate-unit', 'http://127.0.0.1:1/token');
    const key = readCredentialsFile(account.keyFile, 'p');
    if (key.kind !== 'service_account') throw new Error('expected a service account');
    const jwt = signedAssertion(key, ['https://www.googleapis.com/auth/cloud-platform', 'openid'], 1_800_000_000_500);
    const [header, claims, signature] = jwt.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'JWT', kid: account.keyJson.private_key_id });
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toEqual({
      iss: account.clientEmail,
      scope: 'https://www.googleapis.com/auth/cloud-platform openid',
      aud: 'http://127.0.0.1:1/token',
      iat: 1_800_000_000,
      exp: 1_800_003_600,
    });
    expect(verify('RSA-SHA256', Buffer.from(`${header}.${claims}`), account.publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
  });
});

describe("Vertex's addresses", () => {
  it('is regional, global, or the catalog’s own', () => {
    expect(vertexBaseUrl({ project: 'p-123', location: 'us-central1', publisher: 'google' })).toBe('https://us-central1-aiplatform.googleapis.com/v1/projects/p-123/locations/us-central1/publishers/google');
    expect(vertexBaseUrl({ project: 'p-123', location: 'global', publisher: 'anthropic' })).toBe('https://aiplatform.googleapis.com/v1/projects/p-123/locations/global/publishers/anthropic');
    expect(vertexBaseUrl({ project: 'p-123', location: 'global', publisher: 'google', endpoint: 'https://vertex.example.internal/' })).toBe('https://vertex.example.internal/v1/projects/p-123/locations/global/publishers/google');
  });

  it("names the model's method, whatever prefix the catalog gives the model", () => {
    expect(modelMethodPath('claude-sonnet-4-5@20250929', 'rawPredict')).toBe('/models/claude-sonnet-4-5@20250929:rawPredict');
    expect(modelMethodPath('publishers/anthropic/models/claude-haiku-4-5@20251001', 'streamRawPredict')).toBe('/models/claude-haiku-4-5@20251001:streamRawPredict');
    expect(modelMethodPath('models/gemini 2', 'x')).toBe('/models/gemini%202:x');
  });
});
