/**
 * The `azure` provider against the Azure OpenAI double (test/support/azure-upstream.ts): the address
 * of each call in both URL forms, the key or the Entra ID token it sends, Azure's stream (its
 * prompt-filter chunk, filter results on every choice) read to the same events as OpenAI's, and
 * Azure's refusals: a filtered prompt told to the client as such, an unsupported api-version.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { providerSchema, type AzureProviderConfig } from '../../config/schema.js';
import type { CanonicalRequest } from '../../protocol/canonical.js';
import { decodeEmbeddingsRequest } from '../../protocol/embeddings.js';
import { AZURE_API_VERSION, startAzureUpstream, type AzureDouble } from '../../../test/support/azure-upstream.js';
import { collect, expectNoSecrets, upstreamFailure } from '../../../test/support/provider-test-kit.js';
import type { PassthroughFrame, Provider, ProviderCall } from '../provider.js';
import { createAzureProvider } from './azure-provider.js';

const API_KEY = 'azure-unit-key-3e9d';
const TENANT = 'contoso.onmicrosoft.com';
const CLIENT_ID = 'c0ffee00-0000-4000-8000-000000000003';
const CLIENT_SECRET = 'entra~provider~secret~0c4e';
const ENV = { AZURE_TEST_KEY: API_KEY, AZURE_TEST_CLIENT_SECRET: CLIENT_SECRET };
const DEPLOYMENT = 'gpt-4o-mini-prod';

const REQUEST: CanonicalRequest = {
  model: 'tollgate-mini',
  input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
  tools: [],
  toolChoice: 'auto',
  stream: true,
};

const opened: Array<{ close?(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close?.();
});

async function double(): Promise<AzureDouble> {
  const started = await startAzureUpstream({ apiKey: API_KEY, deployments: [DEPLOYMENT], tenantId: TENANT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  opened.push(started);
  return started;
}

function azure(upstream: AzureDouble, entry: Record<string, unknown>): Provider {
  const config = providerSchema.parse({ name: 'azure-test', type: 'azure', endpoint: upstream.endpoint, api_key_env: 'AZURE_TEST_KEY', timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 2_000 }, ...entry }) as AzureProviderConfig;
  const provider = createAzureProvider(config, ENV);
  opened.push(provider);
  return provider;
}

function call(text = 'Hi'): ProviderCall & { request: CanonicalRequest } {
  return {
    upstreamModel: DEPLOYMENT,
    maxOutputTokens: 100,
    signal: new AbortController().signal,
    requestId: 'req_azure_0001',
    request: { ...REQUEST, input: [{ type: 'message', role: 'user', content: [{ type: 'text', text }] }] },
  };
}

const DEPLOYMENTS = { url_form: 'deployments', api_version: AZURE_API_VERSION, api: 'chat' };

describe('the azure provider: addresses and authentication', () => {
  it('streams chat from the deployment address with the api-version and the api-key, the prompt-filter chunk read as nothing', async () => {
    const upstream = await double();
    const { request, ...rest } = call();
    const events = await collect(azure(upstream, DEPLOYMENTS).stream(request, rest));
    expect(events).toEqual([
      { type: 'response-start', upstreamModel: DEPLOYMENT },
      { type: 'text-delta', delta: 'Hello' },
      { type: 'text-delta', delta: ' from' },
      { type: 'text-delta', delta: ' Azure' },
      { type: 'usage', usage: { inputTokens: 11, cachedInputTokens: 3, outputTokens: 5, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop' },
    ]);
    const sent = upstream.requests[0]!;
    expect(sent.path).toBe(`/openai/deployments/${DEPLOYMENT}/chat/completions?api-version=${AZURE_API_VERSION}`);
    expect(sent.headers['api-key']).toBe(API_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body.stream_options).toEqual({ include_usage: true });
  });

  it('calls /openai/v1 with the model in the body, and api-version only when configured', async () => {
    const upstream = await double();
    const { request, ...rest } = call();
    await collect(azure(upstream, { url_form: 'v1', api: 'chat' }).stream(request, rest));
    await collect(azure(upstream, { url_form: 'v1', api: 'responses', api_version: 'preview' }).stream(request, rest));
    const embedder = azure(upstream, { url_form: 'v1' });
    const body = { model: 'tollgate-embed', input: ['a'] };
    await embedder.embed!({ upstreamModel: DEPLOYMENT, request: decodeEmbeddingsRequest(body), body, signal: rest.signal, requestId: rest.requestId });
    expect(upstream.requests.map((sent) => [sent.path, sent.body.model])).toEqual([
      ['/openai/v1/chat/completions', DEPLOYMENT],
      ['/openai/v1/responses?api-version=preview', DEPLOYMENT],
      ['/openai/v1/embeddings', DEPLOYMENT],
    ]);
  });

  it('sends Responses beside the deployments on the deployments form, as AzureOpenAI does', async () => {
    const upstream = await double();
    const { request, ...rest } = call();
    const events = await collect(azure(upstream, { ...DEPLOYMENTS, api: 'responses' }).stream(request, rest));
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(upstream.requests[0]!.path).toBe(`/openai/responses?api-version=${AZURE_API_VERSION}`);
  });

  it('has no moderations, which Azure does not serve', async () => {
    const upstream = await double();
    expect(azure(upstream, DEPLOYMENTS).moderate).toBeUndefined();
    expect(azure(upstream, DEPLOYMENTS).embed).toBeDefined();
  });

  it('authenticates with an Entra ID token, fetched once for several calls', async () => {
    const upstream = await double();
    const provider = azure(upstream, { ...DEPLOYMENTS, api_key_env: undefined, entra: { tenant_id: TENANT, client_id: CLIENT_ID, client_secret_env: 'AZURE_TEST_CLIENT_SECRET', authority: upstream.authority } });
    for (let index = 0; index < 3; index += 1) {
      const { request, ...rest } = call();
      expect((await collect(provider.stream(request, rest))).at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    }
    expect(upstream.tokenRequests).toHaveLength(1);
    expect(upstream.requests.map((sent) => [sent.headers.authorization, sent.headers['api-key']])).toEqual(Array.from({ length: 3 }, () => [`Bearer ${upstream.issuedTokens[0]}`, undefined]));
  });

  it('fails with kind credentials before the call when the token endpoint refuses', async () => {
    const upstream = await double();
    upstream.refuseTokens(true);
    const provider = azure(upstream, { ...DEPLOYMENTS, api_key_env: undefined, entra: { tenant_id: TENANT, client_id: CLIENT_ID, client_secret_env: 'AZURE_TEST_CLIENT_SECRET', authority: upstream.authority } });
    const { request, ...rest } = call();
    const error = await upstreamFailure(collect(provider.stream(request, rest)));
    expect(error.kind).toBe('credentials');
    expect(error.message).toContain('invalid_client: AADSTS7000215');
    expect(upstream.requests).toHaveLength(0);
    expectNoSecrets(error.message, [CLIENT_SECRET, upstream.endpoint]);
  });
});

describe('the azure provider: Azure answers', () => {
  it('tells the client a filtered prompt as content_filter, with the categories, and does not fail over', async () => {
    const upstream = await double();
    const { request, ...rest } = call('Please FILTER_ME now');
    const error = await upstreamFailure(collect(azure(upstream, DEPLOYMENTS).stream(request, rest)));
    expect(error.kind).toBe('status');
    expect(error.status).toBe(400);
    expect(error.failoverable).toBe(false);
    expect(error.clientCode).toBe('content_filter');
    expect(error.clientMessage).toBe("The prompt was filtered by the upstream provider's content filter (filtered: violence (medium)). Modify the prompt and retry.");
    // The log line keeps Azure's own text and the verdict.
    expect(error.message).toContain("HTTP 400 content_filter: The response was filtered due to the prompt triggering Azure OpenAI's content management policy.");
    expect(error.message).toContain('(filtered: violence (medium))');
    expectNoSecrets(error.message, [API_KEY, upstream.endpoint]);
  });

  it('ends an answer the filter cut with finish reason content_filter', async () => {
    const upstream = await double();
    const { request, ...rest } = call('CUT_ME');
    const events = await collect(azure(upstream, DEPLOYMENTS).stream(request, rest));
    expect(events.filter((event) => event.type === 'text-delta')).toEqual([{ type: 'text-delta', delta: 'Partial' }]);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'content_filter' });
  });

  it('names an unsupported api-version and an unknown deployment in its failures', async () => {
    const upstream = await double();
    const { request, ...rest } = call();
    const version = await upstreamFailure(collect(azure(upstream, { ...DEPLOYMENTS, api_version: '2019-01-01' }).stream(request, rest)));
    expect(version.message).toContain('HTTP 400 BadRequest: API version not supported');
    const deployment = await upstreamFailure(collect(azure(upstream, DEPLOYMENTS).stream(request, { ...rest, upstreamModel: 'missing' })));
    expect(deployment.status).toBe(404);
    expect(deployment.message).toContain('HTTP 404 DeploymentNotFound');
  });

  it('passes a chat stream through: the prompt-filter chunk only to a client that asked for usage chunks', async () => {
    const upstream = await double();
    const provider = azure(upstream, DEPLOYMENTS);
    const framesOf = async (clientWantsUsage: boolean): Promise<PassthroughFrame[]> => {
      const { request: _request, ...rest } = call();
      const result = await provider.passthrough!({ ...rest, surface: 'chat-completions', body: { model: 'tollgate-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true }, stream: true, clientWantsUsage });
      if (result.kind !== 'stream') throw new Error('expected a stream');
      const frames: PassthroughFrame[] = [];
      await new Promise<void>((resolve) => result.frames.start({ frame: (frame) => frames.push(frame), closed: resolve }));
      return frames;
    };
    const quiet = await framesOf(false);
    const sent = quiet.map((frame) => frame.sse).filter((sse) => sse !== '');
    expect(sent.some((sse) => sse.includes('prompt_filter_results'))).toBe(false);
    expect(sent.some((sse) => sse.includes('"usage":{'))).toBe(false);
    expect(sent.at(-1)).toBe('data: [DONE]\n\n');
    expect(quiet.flatMap((frame) => frame.events).filter((event) => event.type === 'usage')).toHaveLength(1);

    const asked = await framesOf(true);
    const first = asked[0]!.sse;
    expect(first).toContain('prompt_filter_results');
    // Every chunk names the client's model, the empty one of the prompt-filter chunk too.
    expect(first).toContain('"model":"tollgate-mini"');
    expect(asked.map((frame) => frame.sse).join('')).toContain('"usage":{"prompt_tokens":11');
  });
});

describe('the azure provider: configuration', () => {
  it('requires api_version with deployments, and exactly one of api_key_env and entra', () => {
    const base = { name: 'a', type: 'azure', endpoint: 'https://my-resource.openai.azure.com' };
    expect(providerSchema.safeParse({ ...base, url_form: 'deployments', api_key_env: 'K' }).success).toBe(false);
    expect(providerSchema.safeParse({ ...base, url_form: 'v1' }).success).toBe(false);
    const entra = { tenant_id: TENANT, client_id: CLIENT_ID, client_secret_env: 'S' };
    expect(providerSchema.safeParse({ ...base, url_form: 'v1', api_key_env: 'K', entra }).success).toBe(false);
    expect(providerSchema.safeParse({ ...base, url_form: 'v1', entra, extra: 1 }).success).toBe(false);
    const parsed = providerSchema.parse({ ...base, url_form: 'v1', entra });
    expect(parsed).toMatchObject({ api: 'both', entra: { authority: 'https://login.microsoftonline.com', scope: 'https://cognitiveservices.azure.com/.default' } });
  });

  it('takes the README catalog example of both authentications', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const block = /```yaml\n(providers:[\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const providers = (parse(block) as { providers: Array<Record<string, unknown>> }).providers.filter((entry) => entry.type === 'azure');
    expect(providers.map((entry) => providerSchema.parse(entry))).toMatchObject([
      { name: 'azure', url_form: 'deployments', api_version: '2024-10-21', api_key_env: 'AZURE_OPENAI_API_KEY' },
      { name: 'azure-entra', url_form: 'v1', entra: { client_secret_env: 'AZURE_CLIENT_SECRET', authority: 'https://login.microsoftonline.com' } },
    ]);
  });

  it('refuses to start without the secret its config names, naming the variable only', () => {
    const config = providerSchema.parse({ name: 'a', type: 'azure', endpoint: 'https://my-resource.openai.azure.com', url_form: 'v1', entra: { tenant_id: TENANT, client_id: CLIENT_ID, client_secret_env: 'AZURE_UNSET_SECRET' } }) as AzureProviderConfig;
    expect(() => createAzureProvider(config, {})).toThrow('azure provider "a": environment variable AZURE_UNSET_SECRET (its Entra ID client secret) is not set');
  });
});
