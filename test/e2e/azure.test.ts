/**
 * The `azure` provider type through the real server and the official `openai` client, against the
 * Azure OpenAI double (test/support/azure-upstream.ts), in both URL forms (`deployments`, `v1`) and
 * both authentications (`api-key`, Entra ID tokens): chat streamed and not, with a tool round trip,
 * Responses (passed through, and translated onto Chat), embeddings; each bill equal to the usage
 * the double reported at the catalog's prices, to the nano. Then what is Azure's own: a filtered
 * prompt is the client's 400 `content_filter`, a filtered answer ends `incomplete` on Responses;
 * the Entra token is fetched once, reused, renewed when it nears its end while a stream runs (the
 * stream is not broken, the next call has the new token); a token endpoint that refuses takes the
 * provider out with the reason, and the client gets the gateway's 503. No secret reaches the logs.
 */
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient } from '../support/admin-client.js';
import { AZURE_API_VERSION, AZURE_EMBEDDING_TOKENS, startAzureUpstream, type AzureDouble } from '../support/azure-upstream.js';
import { settledCharges } from '../support/charges.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

const API_KEY = 'azure-e2e-key-6b1f0c';
const TENANT = '0a1b2c3d-0000-4000-8000-00000000a2e5';
const CLIENT_ID = 'c0ffee00-0000-4000-8000-0000000000e2';
const CLIENT_SECRET = 'entra~e2e~secret~4f2a91';
const WRONG_SECRET = 'entra~e2e~wrong~secret~88c3';
const CHAT_DEPLOYMENT = 'gpt-4o-mini-prod';
const EMBED_DEPLOYMENT = 'embed-small-prod';
/** Tokens of the slow double live this long: renewed a tenth of it before their end. */
const SHORT_LIFE_SECONDS = 2;
const PRICES = { input: '1', cached_input: '0.5', output: '4' };
/** The double's chat usage (11 input, 3 of them cached, 5 output) at PRICES: 8 + 1.5 + 20 µUSD. */
const CHAT_COST_NANOS = 29_500n;
/** Its Responses usage (11 input, none reported cached, 5 output): 11 + 20 µUSD. */
const RESPONSES_COST_NANOS = 31_000n;
/** Its embeddings usage at the input price. */
const EMBEDDINGS_COST_NANOS = BigInt(AZURE_EMBEDDING_TOKENS) * 1_000n;

const tool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

/** A chunk's text; Azure's filter chunks have a choice without a delta, which the SDK's types do not foresee. */
function contentOf(chunk: OpenAI.ChatCompletionChunk): string {
  const delta: Partial<OpenAI.ChatCompletionChunk.Choice.Delta> | undefined = chunk.choices[0]?.delta;
  return delta?.content ?? '';
}

/** The four ways of reaching Azure, each a provider and a chat model and an embeddings model on it. */
const VARIANTS = [
  { name: 'dep-key', form: { url_form: 'deployments', api_version: AZURE_API_VERSION }, auth: 'key' },
  { name: 'v1-key', form: { url_form: 'v1' }, auth: 'key' },
  { name: 'dep-entra', form: { url_form: 'deployments', api_version: AZURE_API_VERSION }, auth: 'entra' },
  { name: 'v1-entra', form: { url_form: 'v1', api_version: 'preview' }, auth: 'entra' },
] as const;

function entra(double: AzureDouble, secretEnv: string): Record<string, unknown> {
  return { tenant_id: TENANT, client_id: CLIENT_ID, client_secret_env: secretEnv, authority: double.authority };
}

function catalogFor(double: AzureDouble, slow: AzureDouble): unknown {
  const timeouts = { first_byte_ms: 3_000, idle_ms: 3_000 };
  const providers: unknown[] = VARIANTS.map((variant) => ({
    name: `azure-${variant.name}`,
    type: 'azure',
    endpoint: double.endpoint,
    ...variant.form,
    ...(variant.auth === 'key' ? { api_key_env: 'AZURE_KEY' } : { entra: entra(double, 'AZURE_CLIENT_SECRET') }),
    timeouts,
  }));
  providers.push(
    // Serves Responses clients by translating them onto Chat.
    { name: 'azure-chat-only', type: 'azure', endpoint: double.endpoint, url_form: 'v1', api: 'chat', api_key_env: 'AZURE_KEY', timeouts },
    { name: 'azure-short-tokens', type: 'azure', endpoint: slow.endpoint, url_form: 'deployments', api_version: AZURE_API_VERSION, entra: entra(slow, 'AZURE_CLIENT_SECRET'), timeouts },
    { name: 'azure-refused', type: 'azure', endpoint: double.endpoint, url_form: 'v1', entra: entra(double, 'AZURE_WRONG_SECRET'), timeouts },
  );
  const chatModel = (id: string, provider: string) => ({ id, prices: PRICES, max_output_tokens: 512, targets: [{ provider, model: CHAT_DEPLOYMENT }] });
  const models: unknown[] = VARIANTS.flatMap((variant) => [
    chatModel(`chat-${variant.name}`, `azure-${variant.name}`),
    { id: `embed-${variant.name}`, endpoints: ['embeddings'], prices: { input: '1', output: '0' }, targets: [{ provider: `azure-${variant.name}`, model: EMBED_DEPLOYMENT }] },
  ]);
  models.push(chatModel('chat-translated', 'azure-chat-only'), chatModel('chat-short-tokens', 'azure-short-tokens'), chatModel('chat-refused', 'azure-refused'));
  return { providers, models, rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 } };
}

describe.each(engines)('the azure provider through the official client on %s', (engine) => {
  let harness: Harness;
  let double: AzureDouble;
  let slow: AzureDouble;
  const logLines: string[] = [];

  beforeAll(async () => {
    const deployments = [CHAT_DEPLOYMENT, EMBED_DEPLOYMENT];
    double = await startAzureUpstream({ apiKey: API_KEY, deployments, tenantId: TENANT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    // A stream of eight chunks 400 ms apart outlives its two-second token.
    slow = await startAzureUpstream({ apiKey: API_KEY, deployments, tenantId: TENANT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenLifeSeconds: SHORT_LIFE_SECONDS, chunkDelayMs: 400 });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    harness = await startHarness({
      engine,
      catalog: catalogFor(double, slow),
      env: { AZURE_KEY: API_KEY, AZURE_CLIENT_SECRET: CLIENT_SECRET, AZURE_WRONG_SECRET: WRONG_SECRET },
      logger: pino({ level: 'debug' }, sink),
    });
  });

  afterAll(async () => {
    await harness?.close();
    await Promise.all([double?.close(), slow?.close()]);
  });

  /** The path the double saw for a call of `variant` to `endpoint`. */
  const pathOf = (variant: (typeof VARIANTS)[number], endpoint: 'chat/completions' | 'responses' | 'embeddings', deployment: string): string => {
    if (variant.form.url_form === 'v1') return `/openai/v1/${endpoint}${'api_version' in variant.form ? `?api-version=${variant.form.api_version}` : ''}`;
    if (endpoint === 'responses') return `/openai/responses?api-version=${AZURE_API_VERSION}`;
    return `/openai/deployments/${deployment}/${endpoint}?api-version=${AZURE_API_VERSION}`;
  };

  /** The credential the double saw on its last call: the key, or a token it issued. */
  const expectAuthenticated = (variant: (typeof VARIANTS)[number], upstream: AzureDouble = double): void => {
    const sent = upstream.requests.at(-1)!;
    if (variant.auth === 'key') {
      expect(sent.headers['api-key']).toBe(API_KEY);
      expect(sent.headers.authorization).toBeUndefined();
    } else {
      expect(upstream.issuedTokens).toContain(/^Bearer (.+)$/.exec(sent.headers.authorization ?? '')?.[1]);
      expect(sent.headers['api-key']).toBeUndefined();
    }
  };

  it.each(VARIANTS.map((variant) => [variant.name, variant] as const))('serves chat, streamed and not, with a tool round trip, on %s', async (_name, variant) => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);
    const model = `chat-${variant.name}`;

    const whole = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });
    expect(whole.choices[0]?.message.content).toBe('Hello from Azure');
    expect(whole.model).toBe(model);
    expect(double.requests.at(-1)!.path).toBe(pathOf(variant, 'chat/completions', CHAT_DEPLOYMENT));
    expectAuthenticated(variant);

    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true });
    let text = '';
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += contentOf(chunk);
    }
    expect(text).toBe('Hello from Azure');
    expect(chunks.every((chunk) => chunk.model === model)).toBe(true);
    // Usage was asked of Azure for the bill, not shown to a client that did not ask for it.
    expect(chunks.some((chunk) => chunk.usage)).toBe(false);
    expect(double.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });

    const calling = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather in Bergen?' }], tools: [tool] });
    const toolCall = calling.choices[0]?.message.tool_calls?.[0];
    expect(calling.choices[0]?.finish_reason).toBe('tool_calls');
    expect(toolCall?.type === 'function' ? toolCall.function : undefined).toEqual({ name: 'get_weather', arguments: '{"city":"Bergen"}' });
    const answered = await client.chat.completions.create({
      model,
      tools: [tool],
      messages: [{ role: 'user', content: 'Weather in Bergen?' }, calling.choices[0]!.message, { role: 'tool', tool_call_id: toolCall!.id, content: 'Rain, 9 °C' }],
    });
    expect(answered.choices[0]?.message.content).toBe('The tool said: Rain, 9 °C');

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([CHAT_COST_NANOS, CHAT_COST_NANOS, CHAT_COST_NANOS, CHAT_COST_NANOS]);
  });

  it.each(VARIANTS.map((variant) => [variant.name, variant] as const))('serves Responses, streamed and not, and embeddings, on %s', async (_name, variant) => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);

    const response = await client.responses.create({ model: `chat-${variant.name}`, input: 'Hi' });
    expect(response.output_text).toBe('Hello from Azure');
    expect(double.requests.at(-1)!.path).toBe(pathOf(variant, 'responses', CHAT_DEPLOYMENT));
    expect(double.requests.at(-1)!.body.model).toBe(CHAT_DEPLOYMENT);
    expectAuthenticated(variant);

    const stream = await client.responses.create({ model: `chat-${variant.name}`, input: 'Hi', stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    expect(completed?.output_text ?? completed?.output.map((item) => (item.type === 'message' ? item.content.map((part) => (part.type === 'output_text' ? part.text : '')).join('') : '')).join('')).toBe('Hello from Azure');

    const embeddings = await client.embeddings.create({ model: `embed-${variant.name}`, input: ['one', 'three'], encoding_format: 'float' });
    expect(embeddings.data.map((item) => item.embedding)).toEqual([
      [0.03, 0.5, -0.25],
      [0.05, 0.5, -0.25],
    ]);
    expect(double.requests.at(-1)!.path).toBe(pathOf(variant, 'embeddings', EMBED_DEPLOYMENT));
    expectAuthenticated(variant);

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([RESPONSES_COST_NANOS, RESPONSES_COST_NANOS, EMBEDDINGS_COST_NANOS]);
  });

  it('fetches the Entra token once per provider and reuses it', () => {
    // Every call of both Entra providers above, over one token each.
    const entraCalls = double.requests.filter((sent) => sent.headers.authorization !== undefined);
    expect(entraCalls.length).toBeGreaterThanOrEqual(14);
    const tokens = new Set(entraCalls.map((sent) => sent.headers.authorization));
    expect(tokens.size).toBe(2);
    expect(double.tokenRequests.filter((form) => form.client_secret === CLIENT_SECRET)).toHaveLength(2);
  });

  it('answers a filtered prompt with a 400 content_filter naming the categories, and bills nothing', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const refused = await harness.client(secret).chat.completions
      .create({ model: 'chat-dep-key', messages: [{ role: 'user', content: 'FILTER_ME' }], stream: true })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({ status: 400, code: 'content_filter', type: 'invalid_request_error' });
    expect((refused as Error).message).toContain("The prompt was filtered by the upstream provider's content filter (filtered: violence (medium))");
    // The operator's log keeps Azure's reason.
    await waitFor(async () => logLines.some((line) => line.includes('upstream target failed') && line.includes('content_filter') && line.includes('violence (medium)')));
    expect(await settledCharges(harness, accountId, start)).toEqual([]);
  });

  it('passes finish_reason content_filter through on Chat, and ends a translated Responses answer incomplete', async () => {
    const { secret } = await harness.newAccount('1');
    const client = harness.client(secret);
    const chat = await client.chat.completions.create({ model: 'chat-dep-key', messages: [{ role: 'user', content: 'CUT_ME' }] });
    expect(chat.choices[0]?.finish_reason).toBe('content_filter');
    const translated = await client.responses.create({ model: 'chat-translated', input: 'CUT_ME' });
    expect(double.requests.at(-1)!.path).toBe('/openai/v1/chat/completions');
    expect(translated.status).toBe('incomplete');
    expect(translated.incomplete_details).toEqual({ reason: 'content_filter' });
    expect(translated.output_text).toBe('Partial');
  });

  it('renews the Entra token that expires while a stream runs: the stream ends whole, the next call has a new token', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);
    const stream = await client.chat.completions.create({ model: 'chat-short-tokens', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    const chunks = stream[Symbol.asyncIterator]();
    const first = await chunks.next();
    expect(first.done).toBe(false);
    const firstToken = slow.requests.at(-1)!.headers.authorization;
    expect(slow.tokenRequests).toHaveLength(1);

    // Past the token's renewal time (a tenth of its life before its end), the stream still running:
    // the gateway asked for the token before the double issued it, so it renews no later than this.
    const issuedAt = slow.issuedAt[0]!;
    const renewalAt = issuedAt + SHORT_LIFE_SECONDS * 1_000 * 0.9 + 20;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, renewalAt - Date.now())));
    const next = await client.chat.completions.create({ model: 'chat-short-tokens', messages: [{ role: 'user', content: 'Hi' }] });
    expect(next.choices[0]?.message.content).toBe('Hello from Azure');
    expect(slow.tokenRequests).toHaveLength(2);
    const renewed = slow.requests.at(-1)!.headers.authorization;
    expect(renewed).toBe(`Bearer ${slow.issuedTokens[1]}`);
    expect(renewed).not.toBe(firstToken);

    let text = (first.value === undefined ? '' : contentOf(first.value));
    let usage: OpenAI.CompletionUsage | null | undefined;
    let last: OpenAI.ChatCompletionChunk | undefined;
    for (let chunk = await chunks.next(); chunk.done !== true; chunk = await chunks.next()) {
      text += contentOf(chunk.value);
      usage ??= chunk.value.usage;
      last = chunk.value;
    }
    // The stream ran past its token's end (Azure checks a token when a call arrives).
    expect(Date.now()).toBeGreaterThan(issuedAt + SHORT_LIFE_SECONDS * 1_000);
    expect(text).toBe('Hello from Azure');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 5 });
    expect(last?.choices).toEqual([]);
    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos).sort()).toEqual([CHAT_COST_NANOS, CHAT_COST_NANOS]);
  });

  it('takes the provider out when its token endpoint refuses, with the reason, and answers 503', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const refused = await harness.client(secret).chat.completions
      .create({ model: 'chat-refused', messages: [{ role: 'user', content: 'Hi' }], stream: true })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused).toMatchObject({ status: 503, code: 'model_not_found' });
    // No call reached Azure without a token.
    expect(double.requests.filter((sent) => sent.headers.authorization === undefined && sent.headers['api-key'] === undefined)).toEqual([]);

    const viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    const catalog = await adminClient(harness.baseUrl)('GET', '/catalog', viewer);
    const target = (catalog.body.targets as Array<Record<string, unknown>>).find((entry) => entry.provider === 'azure-refused');
    expect(target).toMatchObject({ provider_type: 'azure', status: 'cooling_down', cause: 'credentials' });
    const failure = logLines.find((line) => line.includes('upstream target failed') && line.includes('azure-refused'));
    expect(failure).toContain('"kind":"credentials"');
    expect(failure).toContain('the Entra ID token endpoint refused the client credentials: HTTP 401 invalid_client: AADSTS7000215');
    expect(await settledCharges(harness, accountId, '1')).toEqual([]);
  });

  it('writes no secret to the logs', () => {
    const all = logLines.join('');
    expect(all.length).toBeGreaterThan(0);
    for (const secret of [API_KEY, CLIENT_SECRET, WRONG_SECRET, ...double.issuedTokens, ...slow.issuedTokens]) expect(all).not.toContain(secret);
  });
});
