/**
 * The Vertex AI double (vertex-upstream.ts) proven with Google's own SDK: @google/genai in Vertex
 * mode, authenticated by google-auth-library from the double's service-account key, generates
 * content from it directly (no gateway between), whole and streamed, and the double's token
 * endpoint checked the library's JWT. What the gateway's tests learn from the double is only as
 * good as this.
 *
 * google-auth-library (10.x) sends a service account's JWT to Google's public token address
 * whatever the key file's `token_uri` says, with that address as `aud`: its token request is
 * turned to the double's `token_uri` by a request interceptor on the library's own transport, and
 * the double takes Google's public `aud` too (`acceptGooglesAudience`), as Google's endpoint does.
 */
import { GoogleGenAI } from '@google/genai';
import { gaxios } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOOGLE_PUBLIC_TOKEN_URL } from './google-token-endpoint.js';
import { GEMINI_GREETING, VERTEX_GEMINI_USAGE } from './vertex-answers.js';
import { CLOUD_PLATFORM_SCOPE, startVertexUpstream, type VertexDouble } from './vertex-upstream.js';

const PROJECT = 'tollgate-proof';
const LOCATION = 'us-central1';
const MODEL = 'gemini-2.5-flash';

let double: VertexDouble;

beforeAll(async () => {
  double = await startVertexUpstream({ project: PROJECT, location: LOCATION, models: { google: [MODEL], anthropic: [] }, acceptGooglesAudience: true });
});
afterAll(() => double.close());

/** The library's transport, its token request sent to the double's token endpoint. */
function transportToDouble(): gaxios.Gaxios {
  const transporter = new gaxios.Gaxios();
  transporter.interceptors.request.add({
    resolved: (options) => {
      if (String(options.url) === GOOGLE_PUBLIC_TOKEN_URL) options.url = new URL(double.tokenUri);
      return Promise.resolve(options);
    },
  });
  return transporter;
}

function genai(): GoogleGenAI {
  return new GoogleGenAI({
    vertexai: true,
    project: PROJECT,
    location: LOCATION,
    apiVersion: 'v1',
    googleAuthOptions: { credentials: double.account.keyJson, scopes: [CLOUD_PLATFORM_SCOPE], clientOptions: { transporter: transportToDouble() } },
    httpOptions: { baseUrl: double.endpoint },
  });
}

describe('the Vertex AI double, driven by @google/genai in Vertex mode', () => {
  it('issues a token for the JWT the library signs, and answers generateContent with it', async () => {
    const answer = await genai().models.generateContent({ model: MODEL, contents: 'Hi' });
    expect(answer.text).toBe(GEMINI_GREETING);
    expect(answer.usageMetadata).toMatchObject({ promptTokenCount: VERTEX_GEMINI_USAGE.promptTokenCount, candidatesTokenCount: VERTEX_GEMINI_USAGE.candidatesTokenCount, thoughtsTokenCount: VERTEX_GEMINI_USAGE.thoughtsTokenCount });

    const [token] = double.tokens.requests;
    expect(token).toMatchObject({ accepted: true, header: { alg: 'RS256' }, claims: { iss: double.account.clientEmail, aud: GOOGLE_PUBLIC_TOKEN_URL, scope: CLOUD_PLATFORM_SCOPE } });
    const sent = double.requests.at(-1)!;
    expect(sent.path).toBe(`/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/${MODEL}:generateContent`);
    expect(sent.headers.authorization).toBe(`Bearer ${[...double.tokens.issued.keys()][0]}`);
    expect(sent.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
  });

  it('streams streamGenerateContent as server-sent events', async () => {
    let text = '';
    let usage: unknown;
    for await (const chunk of await genai().models.generateContentStream({ model: MODEL, contents: 'Hi' })) {
      text += chunk.text ?? '';
      usage = chunk.usageMetadata ?? usage;
    }
    expect(text).toBe(GEMINI_GREETING);
    expect(usage).toMatchObject({ promptTokenCount: 31, cachedContentTokenCount: 8 });
    expect(double.requests.at(-1)!.path).toBe(`/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/${MODEL}:streamGenerateContent?alt=sse`);
  });

  it('calls the offered function', async () => {
    const answer = await genai().models.generateContent({
      model: MODEL,
      contents: 'Weather in Bergen?',
      config: { tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }] },
    });
    expect(answer.functionCalls).toEqual([{ name: 'get_weather', args: { city: 'Bergen' } }]);
  });

  it('refuses a JWT signed by another key, a token it did not issue, and another project', async () => {
    const stranger = await startVertexUpstream({ project: PROJECT, location: LOCATION, models: { google: [MODEL], anthropic: [] } });
    try {
      // The stranger's key file, pointed at this double's token endpoint: signed by the wrong key.
      const forged = await fetch(double.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: await jwtOf(stranger, double.tokenUri) }),
      });
      expect(forged.status).toBe(400);
      expect(await forged.json()).toEqual({ error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    } finally {
      await stranger.close();
    }
    const path = `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/${MODEL}:generateContent`;
    const unknown = await fetch(`${double.endpoint}${path}`, { method: 'POST', headers: { authorization: 'Bearer ya29.made-up' }, body: '{}' });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ error: { status: 'UNAUTHENTICATED' } });
    const token = [...double.tokens.issued.keys()][0]!;
    const elsewhere = await fetch(`${double.endpoint}${path.replace(PROJECT, 'someone-else')}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{}' });
    expect(elsewhere.status).toBe(403);
  });
});

/** A JWT for `aud`, signed with `of`'s key as the gateway signs it. */
async function jwtOf(of: VertexDouble, aud: string): Promise<string> {
  const { signedAssertion } = await import('../../src/providers/vertex/service-account-token.js');
  const { readCredentialsFile } = await import('../../src/providers/vertex/credentials-file.js');
  const key = readCredentialsFile(of.account.keyFile, 'test');
  if (key.kind !== 'service_account') throw new Error('not a service account');
  return signedAssertion({ ...key, tokenUri: aud }, [CLOUD_PLATFORM_SCOPE], Date.now());
}
