/**
 * The `bedrock` provider type through the real server, against the Bedrock double
 * (test/support/bedrock-upstream.ts, which recomputes every SigV4 signature with AWS's signer):
 * the official `openai` client on Chat and Responses, streamed and not, with a tool round trip and
 * Claude's reasoning, over Converse; Anthropic Messages clients on `/v1/messages` passed through to
 * Claude over InvokeModel(WithResponseStream); credentials from the catalog's environment
 * variables and from AWS's standard chain (the container endpoint), whose temporary credentials
 * are renewed while a stream signed with them outlives them. Each bill equals the usage the
 * double reported (input, cache reads, cache writes, output) at the catalog's prices, to the nano.
 * A refused signature takes the provider out with its reason (the client gets the gateway's 503)
 * and bills nothing; no key, secret or token reaches the logs.
 */
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient } from '../support/admin-client.js';
import { GREETING, startBedrockUpstream, THINKING, type BedrockDouble } from '../support/bedrock-upstream.js';
import { settledCharges } from '../support/charges.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const REGION = 'eu-west-1';
const ACCESS_KEY_ID = 'AKIAE2ETESTKEY000001';
const SECRET = 'e2e/bedrock/secret/0a9b8c7d6e5f';
const WRONG_SECRET = 'e2e/bedrock/wrong/secret/1f2e';
const NOVA = 'amazon.nova-pro-v1:0';
const CLAUDE = 'anthropic.claude-sonnet-4-20250514-v1:0';
/** USD per 1M tokens: input 3, cache reads 0.3, cache writes 3.75, output 15. */
const PRICES = { input: '3', cached_input: '0.3', cache_write: '3.75', output: '15' };
/**
 * The double's usage (11 fresh input tokens, 3 read from the cache, 2 written to it, 5 output) at
 * PRICES in nano-USD: 11 × 3,000 + 3 × 300 + 2 × 3,750 + 5 × 15,000.
 */
const COST_NANOS = 33_000n + 900n + 7_500n + 75_000n;
/** The life of the temporary credentials the container endpoint issues: a slow stream outlives them. */
const CREDENTIAL_LIFE_SECONDS = 2;

const tool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

function catalogFor(double: BedrockDouble): unknown {
  const timeouts = { first_byte_ms: 3_000, idle_ms: 3_000 };
  const keys = { access_key_id_env: 'BEDROCK_KEY_ID', secret_access_key_env: 'BEDROCK_SECRET' };
  const base = { type: 'bedrock', region: REGION, endpoint: double.endpoint, timeouts };
  const providers = [
    { name: 'bedrock-converse', ...base, credentials: keys },
    { name: 'bedrock-invoke', ...base, api: 'invoke', credentials: keys },
    // The standard chain: the container endpoint the test points AWS_CONTAINER_CREDENTIALS_FULL_URI at.
    { name: 'bedrock-chain', ...base },
    { name: 'bedrock-refused', ...base, credentials: { ...keys, secret_access_key_env: 'BEDROCK_WRONG_SECRET' } },
  ];
  const model = (id: string, provider: string, upstream: string, extra: Record<string, unknown> = {}) => ({ id, prices: PRICES, max_output_tokens: 8_192, targets: [{ provider, model: upstream }], ...extra });
  return {
    providers,
    models: [
      model('nova', 'bedrock-converse', NOVA),
      model('claude-converse', 'bedrock-converse', CLAUDE, { reasoning_efforts: ['low'] }),
      model('claude-invoke', 'bedrock-invoke', CLAUDE),
      model('nova-chain', 'bedrock-chain', NOVA),
      model('nova-refused', 'bedrock-refused', NOVA),
    ],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
  };
}

describe.each(engines)('the bedrock provider through the real server on %s', (engine) => {
  let harness: Harness;
  let double: BedrockDouble;
  const logLines: string[] = [];
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    double = await startBedrockUpstream({ region: REGION, accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, models: [NOVA, CLAUDE], credentialLifeSeconds: CREDENTIAL_LIFE_SECONDS });
    // AWS's standard chain reads the process's environment: only the container endpoint is left in it.
    for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
    Object.assign(process.env, { AWS_CONTAINER_CREDENTIALS_FULL_URI: double.credentialsUri, AWS_CONFIG_FILE: '/nonexistent/aws-config', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials', AWS_EC2_METADATA_DISABLED: 'true' });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    harness = await startHarness({
      engine,
      catalog: catalogFor(double),
      env: { BEDROCK_KEY_ID: ACCESS_KEY_ID, BEDROCK_SECRET: SECRET, BEDROCK_WRONG_SECRET: WRONG_SECRET },
      logger: pino({ level: 'debug' }, sink),
    });
  });

  afterAll(async () => {
    await harness?.close();
    await double?.close();
    for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
    Object.assign(process.env, savedEnv);
  });

  it('serves Chat over Converse, streamed and not, with a tool round trip, each bill the reported usage at the prices', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);

    const whole = await client.chat.completions.create({ model: 'nova', messages: [{ role: 'user', content: 'Hi' }] });
    expect(whole.choices[0]?.message.content).toBe(GREETING);
    expect(whole.usage).toMatchObject({ prompt_tokens: 16, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 3 } });
    expect(double.requests.at(-1)!.path).toBe('/model/amazon.nova-pro-v1%3A0/converse-stream');
    expect(double.requests.at(-1)!.accessKeyId).toBe(ACCESS_KEY_ID);

    const stream = await client.chat.completions.create({ model: 'nova', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage ??= chunk.usage;
    }
    expect(text).toBe(GREETING);
    expect(usage).toMatchObject({ prompt_tokens: 16, completion_tokens: 5 });

    const calling = await client.chat.completions.create({ model: 'nova', messages: [{ role: 'user', content: 'Weather in Bergen?' }], tools: [tool] });
    const toolCall = calling.choices[0]?.message.tool_calls?.[0];
    expect(calling.choices[0]?.finish_reason).toBe('tool_calls');
    expect(toolCall?.type === 'function' ? toolCall.function : undefined).toEqual({ name: 'get_weather', arguments: '{"city":"Bergen"}' });
    const answered = await client.chat.completions.create({
      model: 'nova',
      tools: [tool],
      messages: [{ role: 'user', content: 'Weather in Bergen?' }, calling.choices[0]!.message, { role: 'tool', tool_call_id: toolCall!.id, content: 'Rain, 9 °C' }],
    });
    expect(answered.choices[0]?.message.content).toBe('The tool said: Rain, 9 °C');

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([COST_NANOS, COST_NANOS, COST_NANOS, COST_NANOS]);
  });

  it('serves Responses over Converse, streamed and not, with Claude’s reasoning and a tool call, at the same bill', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);

    const response = await client.responses.create({ model: 'nova', input: 'Hi' });
    expect(response.output_text).toBe(GREETING);
    expect(response.usage).toMatchObject({ input_tokens: 16, output_tokens: 5, input_tokens_details: { cached_tokens: 3 } });

    const stream = await client.responses.create({ model: 'claude-converse', input: 'Hi', reasoning: { effort: 'low' }, stream: true });
    let reasoning = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.reasoning_summary_text.delta' || event.type === 'response.reasoning_text.delta') reasoning += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(completed?.output_text ?? completed?.output.flatMap((item) => (item.type === 'message' ? item.content.map((part) => (part.type === 'output_text' ? part.text : '')) : [])).join('')).toBe(GREETING);
    expect(reasoning).toBe(THINKING);
    expect(double.requests.at(-1)!.body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2_048 } });

    const calling = await client.responses.create({ model: 'nova', input: 'Weather in Bergen?', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }] });
    const functionCall = calling.output.find((item) => item.type === 'function_call');
    expect(functionCall).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Bergen"}' });
    expect(double.requests.at(-1)!.body.toolConfig).toMatchObject({ tools: [{ toolSpec: { name: 'get_weather' } }] });

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([COST_NANOS, COST_NANOS, COST_NANOS]);
  });

  it('passes /v1/messages through to Claude over InvokeModel, streamed and not, and bills Claude’s usage', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const headers = { 'x-api-key': secret, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14' };
    const body = { model: 'claude-invoke', max_tokens: 2_000, messages: [{ role: 'user', content: 'Hi' }], thinking: { type: 'enabled', budget_tokens: 1_024 } };

    const whole = await harness.post('/v1/messages', body, null, headers);
    expect(whole.status).toBe(200);
    const message = (await whole.json()) as { model: string; content: Array<{ type: string; text?: string; thinking?: string }>; usage: Record<string, number> };
    expect(message.model).toBe('claude-invoke');
    expect(message.content).toMatchObject([{ type: 'thinking', thinking: THINKING }, { type: 'text', text: GREETING }]);
    expect(message.usage).toEqual({ input_tokens: 11, cache_creation_input_tokens: 2, cache_read_input_tokens: 3, output_tokens: 5 });
    const sent = double.requests.at(-1)!;
    expect(sent.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke`);
    expect(sent.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['interleaved-thinking-2025-05-14'], thinking: { type: 'enabled', budget_tokens: 1_024 } });

    const streamed = await harness.post('/v1/messages', { ...body, stream: true }, null, headers);
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    const text = await streamed.text();
    expect(text.startsWith('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_bdrk_')).toBe(true);
    expect(text).toContain('"model":"claude-invoke"');
    expect(text).toContain(`"thinking":"${THINKING}"`);
    expect(text.trimEnd().endsWith('"invocationLatency":321,"firstByteLatency":123}}')).toBe(true);
    expect(double.requests.at(-1)!.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`);

    // Chat clients reach the same Claude through the invoke operation, translated.
    const chat = await harness.client(secret).chat.completions.create({ model: 'claude-invoke', messages: [{ role: 'user', content: 'Hi' }] });
    expect(chat.choices[0]?.message.content).toBe(GREETING);

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([COST_NANOS, COST_NANOS, COST_NANOS]);
  });

  it('signs with temporary credentials from AWS’s standard chain (the container endpoint)', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const answer = await harness.client(secret).chat.completions.create({ model: 'nova-chain', messages: [{ role: 'user', content: 'Hi' }] });
    expect(answer.choices[0]?.message.content).toBe(GREETING);
    const sent = double.requests.at(-1)!;
    expect(double.issued.map((credentials) => credentials.accessKeyId)).toContain(sent.accessKeyId);
    expect(sent.headers['x-amz-security-token']).toBe(double.issued.find((credentials) => credentials.accessKeyId === sent.accessKeyId)?.sessionToken);
    expect((await settledCharges(harness, accountId, start)).map((charge) => charge.amountNanos)).toEqual([COST_NANOS]);
  });

  it('renews temporary credentials that expire while a stream runs: the stream ends whole, the next call is signed anew', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);
    const stream = await client.chat.completions.create({ model: 'nova-chain', messages: [{ role: 'user', content: 'Hi SLOW_ME' }], stream: true, stream_options: { include_usage: true } });
    const chunks = stream[Symbol.asyncIterator]();
    const first = await chunks.next();
    expect(first.done).toBe(false);
    const streamSigner = double.requests.at(-1)!.accessKeyId;
    const signedWith = double.issued.find((credentials) => credentials.accessKeyId === streamSigner)!;

    // Past the end of the credentials the stream was signed with: AWS would refuse them now.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(signedWith.expiration) + 50 - Date.now())));
    const next = await client.chat.completions.create({ model: 'nova-chain', messages: [{ role: 'user', content: 'Hi' }] });
    expect(next.choices[0]?.message.content).toBe(GREETING);
    const renewed = double.requests.at(-1)!.accessKeyId;
    expect(renewed).not.toBe(streamSigner);
    expect(double.issued.map((credentials) => credentials.accessKeyId)).toContain(renewed);

    let text = first.value?.choices[0]?.delta.content ?? '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for (let chunk = await chunks.next(); chunk.done !== true; chunk = await chunks.next()) {
      text += chunk.value.choices[0]?.delta.content ?? '';
      usage ??= chunk.value.usage;
    }
    expect(Date.now()).toBeGreaterThan(Date.parse(signedWith.expiration));
    expect(text).toBe(GREETING);
    expect(usage).toMatchObject({ prompt_tokens: 16, completion_tokens: 5 });
    expect(double.refusals.filter((refusal) => refusal === 'ExpiredTokenException')).toEqual([]);
    expect((await settledCharges(harness, accountId, start)).map((charge) => charge.amountNanos)).toEqual([COST_NANOS, COST_NANOS]);
  });

  it('takes the provider out when AWS refuses its signature, with the reason, and answers 503 billing nothing', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const refused = await harness.client(secret).chat.completions
      .create({ model: 'nova-refused', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused).toMatchObject({ status: 503, code: 'model_not_found' });
    expect(double.refusals).toContain('InvalidSignatureException');

    const viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    const catalog = await adminClient(harness.baseUrl)('GET', '/catalog', viewer);
    const target = (catalog.body.targets as Array<Record<string, unknown>>).find((entry) => entry.provider === 'bedrock-refused');
    expect(target).toMatchObject({ provider_type: 'bedrock', status: 'cooling_down', cause: 'credentials' });
    const failure = logLines.find((line) => line.includes('upstream target failed') && line.includes('bedrock-refused'));
    expect(failure).toContain('"kind":"credentials"');
    expect(failure).toContain('upstream answered HTTP 403: The request signature we calculated does not match the signature you provided');
    expect(await settledCharges(harness, accountId, '1')).toEqual([]);
  });

  it('answers a throttled call with the gateway’s error, and a refused request with Bedrock’s reason, billing nothing', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const client = harness.client(secret, { maxRetries: 0 });
    const invalid = await client.chat.completions.create({ model: 'nova', messages: [{ role: 'user', content: 'INVALID_ME' }] }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(OpenAI.BadRequestError);
    expect((invalid as Error).message).toContain('the prompt holds INVALID_ME');
    const throttled = await client.chat.completions.create({ model: 'nova', messages: [{ role: 'user', content: 'THROTTLE_ME' }] }).catch((error: unknown) => error);
    expect(throttled).toBeInstanceOf(OpenAI.APIError);
    expect((throttled as InstanceType<typeof OpenAI.APIError>).status).toBeGreaterThanOrEqual(429);
    expect(await settledCharges(harness, accountId, '1')).toEqual([]);
  });

  it('writes no secret to the logs', () => {
    const all = logLines.join('');
    expect(all.length).toBeGreaterThan(0);
    for (const secret of [SECRET, WRONG_SECRET, ...double.issued.flatMap((credentials) => [credentials.secretAccessKey, credentials.sessionToken])]) expect(all).not.toContain(secret);
  });
});
