/**
 * The `vertex` provider against the Vertex AI double (test/support/vertex-upstream.ts), on a clock
 * the test moves: the address and bearer token of each call for both publishers; a token that
 * expires while a stream runs (the stream ends whole, the next call fetches and carries a new
 * one); a token Vertex refuses, dropped; and every way of getting no token (a refused JWT, an
 * endpoint that is down, an answer without a token) an `UpstreamError` of kind `credentials` that
 * says why and gives away neither the token endpoint's address nor a token.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { providerSchema, type VertexProviderConfig } from '../../config/schema.js';
import type { CanonicalEvent, CanonicalRequest } from '../../protocol/canonical.js';
import { makeServiceAccount } from '../../../test/support/google-token-endpoint.js';
import { listenOnLoopback } from '../../../test/support/loopback-server.js';
import { collect, expectNoSecrets, upstreamFailure } from '../../../test/support/provider-test-kit.js';
import { CLAUDE_GREETING, GEMINI_GREETING } from '../../../test/support/vertex-answers.js';
import { startVertexUpstream, type VertexDouble } from '../../../test/support/vertex-upstream.js';
import type { Provider, ProviderCall } from '../provider.js';
import { createVertexProvider } from './vertex-provider.js';

const PROJECT = 'tollgate-unit';
const LOCATION = 'global';
const GEMINI = 'gemini-2.5-pro';
const CLAUDE = 'claude-opus-4-1@20250805';

const REQUEST: CanonicalRequest = {
  model: 'tollgate-model',
  input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
  tools: [],
  toolChoice: 'auto',
  stream: true,
};

const opened: Array<{ close?(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close?.();
});

async function double(options: { chunkDelayMs?: number } = {}): Promise<VertexDouble> {
  const started = await startVertexUpstream({ project: PROJECT, location: LOCATION, models: { google: [GEMINI], anthropic: [CLAUDE] }, ...options });
  opened.push(started);
  return started;
}

function vertex(upstream: VertexDouble, entry: Record<string, unknown>, clock?: { now: number }): Provider {
  const config = providerSchema.parse({
    name: 'vertex-test',
    type: 'vertex',
    project: PROJECT,
    location: LOCATION,
    endpoint: upstream.endpoint,
    credentials_file: upstream.account.keyFile,
    token_timeout_ms: 1_000,
    timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 },
    ...entry,
  }) as VertexProviderConfig;
  const provider = createVertexProvider(config, {}, clock === undefined ? {} : { now: () => clock.now });
  opened.push(provider);
  return provider;
}

function call(upstreamModel: string): ProviderCall {
  return { upstreamModel, maxOutputTokens: 256, signal: new AbortController().signal, requestId: 'req_vertex_unit' };
}

const textOf = (events: CanonicalEvent[]) => events.flatMap((event) => (event.type === 'text-delta' ? [event.delta] : [])).join('');

describe('the vertex provider', () => {
  it("calls Gemini at Vertex's global address with a token from the key file's token_uri", async () => {
    const upstream = await double();
    const events = await collect(vertex(upstream, { publisher: 'google' }).stream(REQUEST, call(GEMINI)));
    expect(textOf(events)).toBe(GEMINI_GREETING);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    const [sent] = upstream.requests;
    expect(sent?.path).toBe(`/v1/projects/${PROJECT}/locations/global/publishers/google/models/${GEMINI}:streamGenerateContent?alt=sse`);
    expect(sent?.headers.authorization).toBe(`Bearer ${[...upstream.tokens.issued.keys()][0]}`);
    expect(sent?.headers.accept).toBe('text/event-stream');

    // The model as Google's console names it, with its publisher.
    await collect(vertex(upstream, { publisher: 'google' }).stream(REQUEST, call(`publishers/google/models/${GEMINI}`)));
    expect(upstream.requests.at(-1)?.path).toBe(sent?.path);
  });

  it("calls Claude at :streamRawPredict with anthropic_version and the model's '@' as is", async () => {
    const upstream = await double();
    const events = await collect(vertex(upstream, { publisher: 'anthropic' }).stream(REQUEST, call(CLAUDE)));
    expect(textOf(events)).toBe(CLAUDE_GREETING);
    const [sent] = upstream.requests;
    expect(sent?.path).toBe(`/v1/projects/${PROJECT}/locations/global/publishers/anthropic/models/${CLAUDE}:streamRawPredict`);
    expect(sent?.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 256, stream: true });
    expect(sent?.body).not.toHaveProperty('model');
  });

  it('keeps a running stream when its token expires, and fetches a new token for the next call', async () => {
    const upstream = await double({ chunkDelayMs: 50 });
    const clock = { now: Date.now() };
    const provider = vertex(upstream, { publisher: 'anthropic' }, clock);
    const running = provider.stream(REQUEST, call(CLAUDE))[Symbol.asyncIterator]();
    const events: CanonicalEvent[] = [(await running.next()).value as CanonicalEvent];
    expect(upstream.tokens.requests).toHaveLength(1);

    // Past the token's whole life (3,599 s) while the stream runs.
    clock.now += 3_600_000;
    const next = await collect(provider.stream(REQUEST, call(CLAUDE)));
    expect(textOf(next)).toBe(CLAUDE_GREETING);
    expect(upstream.tokens.requests.filter((request) => request.accepted)).toHaveLength(2);
    const [first, second] = [...upstream.tokens.issued.keys()];
    expect(upstream.requests.map((sent) => sent.headers.authorization)).toEqual([`Bearer ${first}`, `Bearer ${second}`]);

    for (let event = await running.next(); event.done !== true; event = await running.next()) events.push(event.value);
    expect(textOf(events)).toBe(CLAUDE_GREETING);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('drops a token Vertex refuses: the call fails on credentials, the next one fetches another', async () => {
    const upstream = await double();
    const provider = vertex(upstream, { publisher: 'google' });
    await collect(provider.stream(REQUEST, call(GEMINI)));
    const [revoked] = [...upstream.tokens.issued.keys()];
    upstream.tokens.issued.clear();
    const error = await upstreamFailure(collect(provider.stream(REQUEST, call(GEMINI))));
    expect(error).toMatchObject({ kind: 'credentials', status: 401 });
    expect(error.message).toContain('UNAUTHENTICATED');
    expectNoSecrets(error.message, [revoked!, upstream.endpoint]);
    expect(textOf(await collect(provider.stream(REQUEST, call(GEMINI))))).toBe(GEMINI_GREETING);
    expect(upstream.tokens.requests.filter((request) => request.accepted)).toHaveLength(2);
  });

  it("fails on credentials, with the endpoint's reason, when the JWT is refused", async () => {
    const upstream = await double();
    const stranger = makeServiceAccount(PROJECT, upstream.tokenUri);
    const error = await upstreamFailure(collect(vertex(upstream, { publisher: 'google', credentials_file: stranger.keyFile }).stream(REQUEST, call(GEMINI))));
    expect(error.kind).toBe('credentials');
    expect(error.message).toBe(`vertex provider "vertex-test": the service account's token endpoint refused its JWT: HTTP 400 invalid_grant: Invalid JWT Signature.`);
    expect(upstream.requests).toEqual([]);

    upstream.tokens.refusing = true;
    const refused = await upstreamFailure(collect(vertex(upstream, { publisher: 'anthropic' }).stream(REQUEST, call(CLAUDE))));
    expect(refused.message).toContain('HTTP 400 invalid_grant: Invalid grant: account not found');
  });

  it('fails on credentials when the token endpoint is down, or answers without a token', async () => {
    const upstream = await double();
    const closedPort = await listenOnLoopback(createServer());
    await closedPort.close();
    const unreachable = makeServiceAccount(PROJECT, `${closedPort.origin}/token`);
    const down = await upstreamFailure(collect(vertex(upstream, { publisher: 'google', credentials_file: unreachable.keyFile }).stream(REQUEST, call(GEMINI))));
    expect(down.kind).toBe('credentials');
    expect(down.message).toMatch(/^vertex provider "vertex-test": could not reach the service account's token endpoint \(/);
    expectNoSecrets(down.message, [closedPort.origin]);

    const empty = await listenOnLoopback(createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"token_type":"Bearer"}')));
    opened.push(empty);
    const tokenless = makeServiceAccount(PROJECT, `${empty.origin}/token`);
    const answered = await upstreamFailure(collect(vertex(upstream, { publisher: 'google', credentials_file: tokenless.keyFile }).stream(REQUEST, call(GEMINI))));
    expect(answered.message).toBe("vertex provider \"vertex-test\": the service account's token endpoint answered without an access_token and expires_in");

    const hanging = await listenOnLoopback(createServer(() => undefined));
    opened.push(hanging);
    const slow = makeServiceAccount(PROJECT, `${hanging.origin}/token`);
    const silent = await upstreamFailure(collect(vertex(upstream, { publisher: 'google', credentials_file: slow.keyFile, token_timeout_ms: 200 }).stream(REQUEST, call(GEMINI))));
    expect(silent.message).toBe(`vertex provider "vertex-test": could not reach the service account's token endpoint (no answer within 200 ms)`);
    expect(upstream.requests).toEqual([]);
  });

  it('reads the key file GOOGLE_APPLICATION_CREDENTIALS names when the catalog names none', async () => {
    const upstream = await double();
    const config = providerSchema.parse({ name: 'vertex-adc', type: 'vertex', project: PROJECT, location: LOCATION, endpoint: upstream.endpoint, publisher: 'google' }) as VertexProviderConfig;
    const provider = createVertexProvider(config, { GOOGLE_APPLICATION_CREDENTIALS: upstream.account.keyFile });
    opened.push(provider);
    expect(textOf(await collect(provider.stream(REQUEST, call(GEMINI))))).toBe(GEMINI_GREETING);
    expect(upstream.tokens.requests).toMatchObject([{ accepted: true, claims: { aud: upstream.tokenUri } }]);
  });

  it('takes the README catalog examples, and refuses entries Vertex cannot serve', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const block = /```yaml\n(providers:[\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const providers = (parse(block) as { providers: Array<Record<string, unknown>> }).providers.filter((entry) => entry.type === 'vertex');
    expect(providers.map((entry) => providerSchema.parse(entry))).toMatchObject([
      { name: 'vertex-gemini', publisher: 'google', location: 'us-central1', scopes: ['https://www.googleapis.com/auth/cloud-platform'], token_timeout_ms: 10_000, anthropic_version: 'vertex-2023-10-16' },
      { name: 'vertex-claude', publisher: 'anthropic', location: 'us-east5' },
    ]);
    const base = { name: 'v', type: 'vertex', project: 'my-project', location: 'us-central1', publisher: 'google' };
    expect(providerSchema.safeParse(base).success).toBe(true);
    for (const bad of [{ publisher: 'meta' }, { project: 'X' }, { location: 'us central' }, { endpoint: 'not a url' }, { scopes: [] }, { api_key_env: 'KEY' }]) {
      expect(providerSchema.safeParse({ ...base, ...bad }).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('refuses to start with a credentials file it cannot read', () => {
    const config = providerSchema.parse({ name: 'v', type: 'vertex', project: 'my-project', location: 'global', publisher: 'google', credentials_file: '/nonexistent/sa.json' }) as VertexProviderConfig;
    expect(() => createVertexProvider(config, {})).toThrow('vertex provider "v": cannot read its credentials file /nonexistent/sa.json (ENOENT)');
  });

  it("fails over on Vertex's quota refusal, and ends a stream Vertex breaks with an error event, for both publishers", async () => {
    const upstream = await double();
    const asking = (text: string): CanonicalRequest => ({ ...REQUEST, input: [{ type: 'message', role: 'user', content: [{ type: 'text', text }] }] });
    for (const [publisher, model] of [['google', GEMINI], ['anthropic', CLAUDE]] as const) {
      const provider = vertex(upstream, { publisher });
      const quota = await upstreamFailure(collect(provider.stream(asking('QUOTA_ME'), call(model))));
      expect(quota).toMatchObject({ kind: 'status', status: 429, failoverable: true });
      expect(quota.message).toContain('RESOURCE_EXHAUSTED');
      const broken = await collect(provider.stream(asking('BREAK_MID'), call(model)));
      expect(textOf(broken)).toBe('Hello');
      expect(broken.at(-1)).toMatchObject({ type: 'error' });
    }
  });

  it('fails on credentials, with the reason and no secret, when Application Default Credentials give no token', async () => {
    const upstream = await double();
    const config = providerSchema.parse({ name: 'vertex-adc', type: 'vertex', project: PROJECT, location: LOCATION, endpoint: upstream.endpoint, publisher: 'google', token_timeout_ms: 1_000 }) as VertexProviderConfig;
    // gcloud's login, handed to Google's library: its refresh goes to Google, which a test cannot reach.
    const userFile = makeServiceAccount(PROJECT, upstream.tokenUri).keyFile.replace('service-account.json', 'user.json');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(userFile, JSON.stringify({ type: 'authorized_user', client_id: 'id.apps.googleusercontent.com', client_secret: 'd-FL95Q19q7MQmFpd7hHD0Ty', refresh_token: '1//0gRefreshTokenSecret' }));
    const provider = createVertexProvider(config, { GOOGLE_APPLICATION_CREDENTIALS: userFile });
    opened.push(provider);
    const error = await upstreamFailure(collect(provider.stream(REQUEST, call(GEMINI))));
    expect(error.kind).toBe('credentials');
    expect(error.message).toMatch(/^vertex provider "vertex-adc": Application Default Credentials gave no token \(.+\)$/);
    expectNoSecrets(error.message, ['d-FL95Q19q7MQmFpd7hHD0Ty', '1//0gRefreshTokenSecret']);
    expect(upstream.requests).toEqual([]);
  });
});
