/**
 * The Azure OpenAI double (azure-upstream.ts) proven with the vendor's own client: openai-node's
 * `AzureOpenAI`, with a key and with an Entra ID token provider, talks to it directly (no gateway
 * between) and gets what Azure gives it, refusals included. What the gateway's tests learn from
 * the double is only as good as this.
 */
import { AzureOpenAI, type OpenAI } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AZURE_API_VERSION, AZURE_USAGE, startAzureUpstream, type AzureDouble } from './azure-upstream.js';

const API_KEY = 'azure-double-key-0f3c';
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const CLIENT_ID = 'c0ffee00-0000-4000-8000-000000000001';
const CLIENT_SECRET = 'entra~double~secret~9a7b';

/** A chunk's text; Azure's filter chunks have a choice without a delta, which the SDK's types do not foresee. */
function contentOf(chunk: OpenAI.ChatCompletionChunk): string {
  const delta: Partial<OpenAI.ChatCompletionChunk.Choice.Delta> | undefined = chunk.choices[0]?.delta;
  return delta?.content ?? '';
}

let double: AzureDouble;

beforeAll(async () => {
  double = await startAzureUpstream({ apiKey: API_KEY, deployments: ['chat-deployment', 'embed-deployment'], tenantId: TENANT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
});
afterAll(() => double.close());

function keyClient(options: { apiVersion?: string; deployment?: string } = {}): AzureOpenAI {
  return new AzureOpenAI({ endpoint: double.endpoint, apiKey: API_KEY, apiVersion: options.apiVersion ?? AZURE_API_VERSION, maxRetries: 0, ...(options.deployment === undefined ? {} : { deployment: options.deployment }) });
}

/** A client-credentials exchange as @azure/identity's ClientSecretCredential makes it. */
async function entraToken(): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET, scope: 'https://cognitiveservices.azure.com/.default' });
  const answer = await fetch(`${double.authority}/${TENANT}/oauth2/v2.0/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
  expect(answer.status).toBe(200);
  const body = (await answer.json()) as { token_type: string; access_token: string; expires_in: number };
  expect(body.token_type).toBe('Bearer');
  expect(body.expires_in).toBeGreaterThan(0);
  return body.access_token;
}

describe('the Azure OpenAI double, driven by AzureOpenAI', () => {
  it('answers chat with the api-key, at the deployment address with the api-version', async () => {
    const completion = await keyClient({ deployment: 'chat-deployment' }).chat.completions.create({ model: 'ignored-by-azure', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]?.message.content).toBe('Hello from Azure');
    expect(completion.usage).toMatchObject({ prompt_tokens: AZURE_USAGE.prompt_tokens, completion_tokens: AZURE_USAGE.completion_tokens });
    const sent = double.requests.at(-1)!;
    expect(sent.path).toBe(`/openai/deployments/chat-deployment/chat/completions?api-version=${AZURE_API_VERSION}`);
    expect(sent.headers['api-key']).toBe(API_KEY);
  });

  it('streams chat as Azure does: the prompt filter chunk first, usage only when asked for', async () => {
    const stream = await keyClient().chat.completions.create({ model: 'chat-deployment', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]).toMatchObject({ choices: [], id: '', model: '', prompt_filter_results: [{ prompt_index: 0 }] });
    expect(chunks.map((chunk) => contentOf(chunk)).join('')).toBe('Hello from Azure');
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 5 });
    // The SDK names the deployment in the address, from the body's model.
    expect(double.requests.at(-1)!.path).toBe(`/openai/deployments/chat-deployment/chat/completions?api-version=${AZURE_API_VERSION}`);

    const quiet = await keyClient().chat.completions.create({ model: 'chat-deployment', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const quietChunks = [];
    for await (const chunk of quiet) quietChunks.push(chunk);
    expect(quietChunks.some((chunk) => chunk.usage)).toBe(false);
  });

  it('answers Responses and embeddings', async () => {
    const response = await keyClient({ apiVersion: '2025-04-01-preview' }).responses.create({ model: 'chat-deployment', input: 'Hi' });
    expect(response.output_text).toBe('Hello from Azure');
    expect(double.requests.at(-1)!.path).toBe('/openai/responses?api-version=2025-04-01-preview');

    const embeddings = await keyClient().embeddings.create({ model: 'embed-deployment', input: ['one', 'two'], encoding_format: 'float' });
    expect(embeddings.data).toHaveLength(2);
    expect(embeddings.usage.prompt_tokens).toBe(7);
    expect(double.requests.at(-1)!.path).toBe(`/openai/deployments/embed-deployment/embeddings?api-version=${AZURE_API_VERSION}`);
  });

  it('refuses as Azure does: a wrong key, an unknown deployment, an unsupported api-version, a filtered prompt', async () => {
    const wrongKey = new AzureOpenAI({ endpoint: double.endpoint, apiKey: 'wrong', apiVersion: AZURE_API_VERSION, maxRetries: 0 });
    await expect(wrongKey.chat.completions.create({ model: 'chat-deployment', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({ status: 401 });
    await expect(keyClient().chat.completions.create({ model: 'nowhere', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({ status: 404, code: 'DeploymentNotFound' });
    await expect(keyClient({ apiVersion: '2019-01-01' }).chat.completions.create({ model: 'chat-deployment', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      status: 400,
      code: 'BadRequest',
      message: expect.stringContaining('API version not supported'),
    });
    const filtered = await keyClient()
      .chat.completions.create({ model: 'chat-deployment', messages: [{ role: 'user', content: 'FILTER_ME' }] })
      .catch((error: unknown) => error);
    expect(filtered).toMatchObject({ status: 400, code: 'content_filter', param: 'prompt' });
    expect((filtered as { error: { innererror: { content_filter_result: Record<string, unknown> } } }).error.innererror.content_filter_result.violence).toEqual({ filtered: true, severity: 'medium' });
  });

  it('answers a missing api-version with 404 Resource not found', async () => {
    const answer = await fetch(`${double.endpoint}/openai/deployments/chat-deployment/chat/completions`, { method: 'POST', headers: { 'api-key': API_KEY, 'content-type': 'application/json' }, body: '{"messages":[]}' });
    expect(answer.status).toBe(404);
    expect(await answer.json()).toEqual({ error: { code: '404', message: 'Resource not found' } });
  });

  it('takes the Entra ID tokens it issued, through azureADTokenProvider, and refuses others', async () => {
    const before = double.tokenRequests.length;
    const client = new AzureOpenAI({ endpoint: double.endpoint, azureADTokenProvider: entraToken, apiVersion: AZURE_API_VERSION, deployment: 'chat-deployment', maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'chat-deployment', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]?.message.content).toBe('Hello from Azure');
    expect(double.tokenRequests.length).toBe(before + 1);
    expect(double.tokenRequests.at(-1)).toEqual({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET, scope: 'https://cognitiveservices.azure.com/.default' });
    const sent = double.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${double.issuedTokens.at(-1)}`);
    expect(sent.headers['api-key']).toBeUndefined();

    const forged = new AzureOpenAI({ endpoint: double.endpoint, azureADTokenProvider: () => Promise.resolve('forged'), apiVersion: AZURE_API_VERSION, maxRetries: 0 });
    await expect(forged.chat.completions.create({ model: 'chat-deployment', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({ status: 401 });

    double.refuseTokens(true);
    const refused = await fetch(`${double.authority}/${TENANT}/oauth2/v2.0/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    double.refuseTokens(false);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'invalid_client', error_codes: [7000215] });
  });
});
