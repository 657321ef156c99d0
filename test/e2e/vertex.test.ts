/**
 * The `vertex` provider type through the real server, against the Vertex AI double
 * (test/support/vertex-upstream.ts), which is also the service account's token endpoint and checks
 * its JWT: Gemini (`publisher: google`) and Claude (`publisher: anthropic`) served to the official
 * `openai` client (Chat and Responses, streamed and not, a tool round trip) and Claude to
 * `/v1/messages` (passed through, streamed and not), each bill equal to the usage the double
 * reported at the catalog's prices, to the nano. Then the tokens: fetched once per provider from
 * the key file's own `token_uri` and reused; renewed when one nears its end while a stream runs
 * (the stream is not broken, the next call has the new token); a token endpoint that refuses the
 * JWT takes the provider out with its reason, and the client gets the gateway's 503. No secret
 * reaches the logs.
 */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient } from '../support/admin-client.js';
import { settledCharges } from '../support/charges.js';
import { engines } from '../support/databases.js';
import { makeServiceAccount } from '../support/google-token-endpoint.js';
import { startHarness, type Harness } from '../support/harness.js';
import { CLAUDE_GREETING, GEMINI_GREETING } from '../support/vertex-answers.js';
import { CLAUDE_VERSION, startVertexUpstream, type VertexDouble } from '../support/vertex-upstream.js';
import { waitFor } from '../support/wait-for.js';

const PROJECT = 'tollgate-e2e';
const LOCATION = 'europe-west4';
const GEMINI = 'gemini-2.5-flash';
const CLAUDE = 'claude-sonnet-4-5@20250929';
/** Tokens of the slow double live this long: renewed a tenth of it before their end. */
const SHORT_LIFE_SECONDS = 2;
const PRICES = { input: '1', cached_input: '0.5', output: '4' };
/** Gemini's usage (31 prompt, 8 of them cached; 9 candidates + 4 thoughts) at PRICES: 23 + 4 + 52 µUSD. */
const GEMINI_COST_NANOS = 79_000n;
/** Claude's usage (21 input + 6 cache reads; 12 output) at PRICES: 21 + 3 + 48 µUSD. */
const CLAUDE_COST_NANOS = 72_000n;

const tool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

const basePath = (publisher: 'google' | 'anthropic') => `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/${publisher}/models`;

function catalogFor(double: VertexDouble, slow: VertexDouble, strangerKeyFile: string): unknown {
  const timeouts = { first_byte_ms: 3_000, idle_ms: 3_000 };
  const provider = (name: string, upstream: VertexDouble, publisher: 'google' | 'anthropic', keyFile = upstream.account.keyFile) => ({
    name,
    type: 'vertex',
    project: PROJECT,
    location: LOCATION,
    endpoint: upstream.endpoint,
    publisher,
    credentials_file: keyFile,
    timeouts,
  });
  const model = (id: string, target: string, upstreamModel: string) => ({ id, prices: PRICES, max_output_tokens: 512, targets: [{ provider: target, model: upstreamModel }] });
  return {
    providers: [
      provider('vertex-gemini', double, 'google'),
      provider('vertex-claude', double, 'anthropic'),
      provider('vertex-short-tokens', slow, 'anthropic'),
      // A key the double does not know, its token_uri the double's: its JWT's signature is refused.
      provider('vertex-refused', double, 'google', strangerKeyFile),
    ],
    models: [model('gemini-model', 'vertex-gemini', GEMINI), model('claude-model', 'vertex-claude', CLAUDE), model('claude-short-tokens', 'vertex-short-tokens', CLAUDE), model('gemini-refused', 'vertex-refused', GEMINI)],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
  };
}

describe.each(engines)('the vertex provider through the official client on %s', (engine) => {
  let harness: Harness;
  let double: VertexDouble;
  let slow: VertexDouble;
  let strangerKeyFile: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    const models = { google: [GEMINI], anthropic: [CLAUDE] };
    double = await startVertexUpstream({ project: PROJECT, location: LOCATION, models });
    // A Claude stream of ten events 400 ms apart outlives its two-second token.
    slow = await startVertexUpstream({ project: PROJECT, location: LOCATION, models, tokenLifeSeconds: SHORT_LIFE_SECONDS, chunkDelayMs: 400 });
    strangerKeyFile = makeServiceAccount(PROJECT, double.tokenUri).keyFile;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    harness = await startHarness({ engine, catalog: catalogFor(double, slow, strangerKeyFile), env: {}, logger: pino({ level: 'debug' }, sink) });
  });

  afterAll(async () => {
    await harness?.close();
    await Promise.all([double?.close(), slow?.close()]);
  });

  /** The last call the double saw carried a token it issued, and went to `path`. */
  const expectCall = (upstream: VertexDouble, path: string): Record<string, unknown> => {
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe(path);
    expect(upstream.tokens.issued.has(/^Bearer (.+)$/.exec(sent.headers.authorization ?? '')?.[1] ?? '')).toBe(true);
    return sent.body;
  };

  it('serves Gemini to Chat, streamed and not, with a tool round trip, billed as Vertex reported', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);
    const streamPath = `${basePath('google')}/${GEMINI}:streamGenerateContent?alt=sse`;

    const whole = await client.chat.completions.create({ model: 'gemini-model', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] });
    expect(whole.choices[0]?.message.content).toBe(GEMINI_GREETING);
    expect(whole.usage).toMatchObject({ prompt_tokens: 31, completion_tokens: 13, prompt_tokens_details: { cached_tokens: 8 } });
    expect(expectCall(double, streamPath)).toMatchObject({ systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], generationConfig: { maxOutputTokens: 512 } });
    expect(double.requests.at(-1)!.headers['x-goog-api-key']).toBeUndefined();

    const stream = await client.chat.completions.create({ model: 'gemini-model', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage ??= chunk.usage;
    }
    expect(text).toBe(GEMINI_GREETING);
    expect(usage).toMatchObject({ prompt_tokens: 31, completion_tokens: 13 });

    const calling = await client.chat.completions.create({ model: 'gemini-model', messages: [{ role: 'user', content: 'Weather in Bergen?' }], tools: [tool] });
    const toolCall = calling.choices[0]?.message.tool_calls?.[0];
    expect(calling.choices[0]?.finish_reason).toBe('tool_calls');
    expect(toolCall?.type === 'function' ? toolCall.function : undefined).toEqual({ name: 'get_weather', arguments: '{"city":"Bergen"}' });
    const answered = await client.chat.completions.create({
      model: 'gemini-model',
      tools: [tool],
      messages: [{ role: 'user', content: 'Weather in Bergen?' }, calling.choices[0]!.message, { role: 'tool', tool_call_id: toolCall!.id, content: 'Rain, 9 °C' }],
    });
    expect(answered.choices[0]?.message.content).toBe('The tool said: {"result":"Rain, 9 °C"}');
    expect(expectCall(double, streamPath).contents).toContainEqual({ role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: 'Rain, 9 °C' } } }] });

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([GEMINI_COST_NANOS, GEMINI_COST_NANOS, GEMINI_COST_NANOS, GEMINI_COST_NANOS]);
  });

  it('serves Gemini and Claude to Responses, streamed and not', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);

    const gemini = await client.responses.create({ model: 'gemini-model', input: 'Hi' });
    expect(gemini.output_text).toBe(GEMINI_GREETING);
    expect(gemini.usage).toMatchObject({ input_tokens: 31, input_tokens_details: { cached_tokens: 8 }, output_tokens: 13, output_tokens_details: { reasoning_tokens: 4 } });
    const claude = await client.responses.create({ model: 'claude-model', input: 'Hi' });
    expect(claude.output_text).toBe(CLAUDE_GREETING);
    expect(claude.usage).toMatchObject({ input_tokens: 27, input_tokens_details: { cached_tokens: 6 }, output_tokens: 12 });
    expect(expectCall(double, `${basePath('anthropic')}/${CLAUDE}:streamRawPredict`)).toMatchObject({ anthropic_version: CLAUDE_VERSION, stream: true });

    for (const model of ['gemini-model', 'claude-model']) {
      const stream = client.responses.stream({ model, input: 'Hi' });
      let deltas = '';
      stream.on('response.output_text.delta', (event) => {
        deltas += event.delta;
      });
      const final = await stream.finalResponse();
      expect(final.status).toBe('completed');
      expect(deltas).toBe(model === 'gemini-model' ? GEMINI_GREETING : CLAUDE_GREETING);
    }

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([GEMINI_COST_NANOS, CLAUDE_COST_NANOS, GEMINI_COST_NANOS, CLAUDE_COST_NANOS]);
  });

  it('serves Claude to Chat with a tool round trip: no model in the body, anthropic_version instead', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);
    const calling = await client.chat.completions.create({ model: 'claude-model', messages: [{ role: 'user', content: 'Weather in Bergen?' }], tools: [tool] });
    const toolCall = calling.choices[0]?.message.tool_calls?.[0];
    expect(toolCall?.type === 'function' ? toolCall.function : undefined).toEqual({ name: 'get_weather', arguments: '{"city":"Bergen"}' });
    const sent = expectCall(double, `${basePath('anthropic')}/${CLAUDE}:streamRawPredict`);
    expect(sent).not.toHaveProperty('model');
    expect(sent).not.toHaveProperty('service_tier');
    expect(sent).toMatchObject({ anthropic_version: CLAUDE_VERSION, max_tokens: 512, tools: [{ name: 'get_weather' }] });
    expect(double.requests.at(-1)!.headers['anthropic-version']).toBeUndefined();

    const answered = await client.chat.completions.create({
      model: 'claude-model',
      tools: [tool],
      messages: [{ role: 'user', content: 'Weather in Bergen?' }, calling.choices[0]!.message, { role: 'tool', tool_call_id: toolCall!.id, content: 'Rain, 9 °C' }],
    });
    expect(answered.choices[0]?.message.content).toBe('The tool said: Rain, 9 °C');
    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([CLAUDE_COST_NANOS, CLAUDE_COST_NANOS]);
  });

  it('passes /v1/messages through to Claude, streamed and not, with the client model named back', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const send = (body: Record<string, unknown>) =>
      harness.post('/v1/messages', { model: 'claude-model', max_tokens: 100_000, messages: [{ role: 'user', content: 'Hi' }], metadata: { user_id: 'u1' }, ...body }, null, {
        'x-api-key': secret,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'context-1m-2025-08-07',
      });

    const whole = await send({});
    expect(whole.status).toBe(200);
    expect(await whole.json()).toMatchObject({ type: 'message', model: 'claude-model', content: [{ type: 'text', text: CLAUDE_GREETING }], usage: { input_tokens: 21, cache_read_input_tokens: 6, output_tokens: 12 } });
    const sentWhole = expectCall(double, `${basePath('anthropic')}/${CLAUDE}:rawPredict`);
    expect(sentWhole).toEqual({ anthropic_version: CLAUDE_VERSION, max_tokens: 512, messages: [{ role: 'user', content: 'Hi' }], metadata: { user_id: 'u1' } });
    expect(double.requests.at(-1)!.headers['anthropic-beta']).toBe('context-1m-2025-08-07');

    const streamed = await send({ stream: true });
    expect(streamed.status).toBe(200);
    const text = await streamed.text();
    expect(text).toContain('event: message_start');
    expect(text).toContain('"model":"claude-model"');
    expect(text).toContain('event: message_stop');
    expect([...text.matchAll(/"text":"([^"]*)"/g)].map((match) => match[1]).join('')).toBe(CLAUDE_GREETING);
    expect(expectCall(double, `${basePath('anthropic')}/${CLAUDE}:streamRawPredict`)).toMatchObject({ anthropic_version: CLAUDE_VERSION, stream: true });

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([CLAUDE_COST_NANOS, CLAUDE_COST_NANOS]);
  });

  it("fetches a token once per provider, at the key file's token_uri, with the JWT Google checks", () => {
    const accepted = double.tokens.requests.filter((request) => request.accepted);
    // vertex-gemini and vertex-claude: one token each for every call above.
    expect(accepted).toHaveLength(2);
    const key = JSON.parse(readFileSync(double.account.keyFile, 'utf8')) as Record<string, string>;
    for (const request of accepted) {
      expect(request.header).toEqual({ alg: 'RS256', typ: 'JWT', kid: key.private_key_id });
      expect(request.claims).toMatchObject({ iss: key.client_email, aud: key.token_uri, scope: 'https://www.googleapis.com/auth/cloud-platform' });
      expect(Number(request.claims.exp) - Number(request.claims.iat)).toBe(3_600);
    }
    expect(new Set(double.requests.filter((sent) => sent.headers.authorization !== undefined).map((sent) => sent.headers.authorization)).size).toBe(2);
  });

  it('renews the token that expires while a stream runs: the stream ends whole, the next call has a new token', async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);
    const stream = await client.chat.completions.create({ model: 'claude-short-tokens', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    const chunks = stream[Symbol.asyncIterator]();
    const first = await chunks.next();
    expect(first.done).toBe(false);
    const firstToken = slow.requests.at(-1)!.headers.authorization;
    expect(slow.tokens.requests).toHaveLength(1);

    // Past the token's renewal time (a tenth of its life before its end), the stream still running.
    const issuedAt = slow.tokens.issuedAt[0]!;
    const renewalAt = issuedAt + SHORT_LIFE_SECONDS * 1_000 * 0.9 + 20;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, renewalAt - Date.now())));
    const next = await client.chat.completions.create({ model: 'claude-short-tokens', messages: [{ role: 'user', content: 'Hi' }] });
    expect(next.choices[0]?.message.content).toBe(CLAUDE_GREETING);
    expect(slow.tokens.requests).toHaveLength(2);
    const renewed = slow.requests.at(-1)!.headers.authorization;
    expect(renewed).toBe(`Bearer ${[...slow.tokens.issued.keys()][1]}`);
    expect(renewed).not.toBe(firstToken);

    let text = first.value?.choices[0]?.delta.content ?? '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for (let chunk = await chunks.next(); chunk.done !== true; chunk = await chunks.next()) {
      text += chunk.value.choices[0]?.delta.content ?? '';
      usage ??= chunk.value.usage;
    }
    // The stream ran past its token's end (Vertex checks a token when a call arrives).
    expect(Date.now()).toBeGreaterThan(issuedAt + SHORT_LIFE_SECONDS * 1_000);
    expect(text).toBe(CLAUDE_GREETING);
    expect(usage).toMatchObject({ prompt_tokens: 27, completion_tokens: 12 });
    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([CLAUDE_COST_NANOS, CLAUDE_COST_NANOS]);
  });

  it('takes the provider out when the token endpoint refuses its JWT, with the reason, and answers 503', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const before = double.requests.length;
    const refused = await harness.client(secret).chat.completions
      .create({ model: 'gemini-refused', messages: [{ role: 'user', content: 'Hi' }], stream: true })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused).toMatchObject({ status: 503, code: 'model_not_found' });
    // No call reached Vertex without a token.
    expect(double.requests.length).toBe(before);
    expect(double.tokens.requests.at(-1)).toMatchObject({ accepted: false });

    const viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    const catalog = await adminClient(harness.baseUrl)('GET', '/catalog', viewer);
    const target = (catalog.body.targets as Array<Record<string, unknown>>).find((entry) => entry.provider === 'vertex-refused');
    expect(target).toMatchObject({ provider_type: 'vertex', status: 'cooling_down', cause: 'credentials' });
    await waitFor(() => Promise.resolve(logLines.some((line) => line.includes('upstream target failed') && line.includes('vertex-refused'))));
    const failure = logLines.find((line) => line.includes('upstream target failed') && line.includes('vertex-refused'));
    expect(failure).toContain('"kind":"credentials"');
    expect(failure).toContain("the service account's token endpoint refused its JWT: HTTP 400 invalid_grant: Invalid JWT Signature.");
    expect(failure).not.toContain(double.tokenUri);
    expect(await settledCharges(harness, accountId, '1')).toEqual([]);
  });

  it('writes no secret to the logs', () => {
    const all = logLines.join('');
    expect(all.length).toBeGreaterThan(0);
    const privateKeyLine = String(double.account.keyJson.private_key).split('\n')[1]!;
    for (const secret of [privateKeyLine, ...double.tokens.issued.keys(), ...slow.tokens.issued.keys()]) expect(all).not.toContain(secret);
  });
});
