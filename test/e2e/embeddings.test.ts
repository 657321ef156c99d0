/**
 * `POST /v1/embeddings` end to end, on SQLite and on PostgreSQL + Redis: the official openai client
 * in both encodings (it asks for base64 unless told otherwise), the simulated provider, an
 * OpenAI-compatible upstream passed through (its base64 vectors byte for byte), and Gemini
 * translated (`batchEmbedContents` in chunks of 100, with and without a token count). Each charge is
 * the upstream's reported tokens × the input price, to the nano (or the gateway's exact count when
 * none is reported); a race of 60 on a balance for 10 admits exactly 10; bad input costs nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { runYielding } from '../../src/lib/run-yielding.js';
import { countEmbeddingTokens, decodeBase64Embedding } from '../../src/protocol/embeddings.js';
import { boundInputTokens } from '../../src/protocol/input-bound.js';
import { simulatedVector } from '../../src/providers/simulated/embeddings.js';
import { engines } from '../support/databases.js';
import { doubleVector, startEmbeddingsUpstream, type EmbeddingsDouble } from '../support/embeddings-upstream.js';
import { settledCharges } from '../support/charges.js';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

const INPUT_PRICE = '0.02';
const PER_MILLION = usdToNanos(INPUT_PRICE);

function embeddingsCatalog(double: EmbeddingsDouble): unknown {
  const embeddingModel = (id: string, provider: string, upstream: string) => ({
    id,
    endpoints: ['embeddings'],
    prices: { input: INPUT_PRICE, output: '0' },
    targets: [{ provider, model: upstream }],
  });
  return {
    providers: [
      { name: 'sim', type: 'simulated' },
      { name: 'sim-hang', type: 'simulated', failure: { mode: 'hang' }, timeouts: { first_byte_ms: 300 } },
      { name: 'relay', type: 'openai', base_url: double.openaiBaseUrl, api_key_env: 'TEST_UPSTREAM_KEY' },
      { name: 'gemini', type: 'gemini', base_url: double.geminiBaseUrl, api_key_env: 'TEST_GEMINI_KEY' },
    ],
    models: [
      embeddingModel('embed-small', 'sim', 'embed-small'),
      embeddingModel('embed-relay', 'relay', 'text-embedding-3-small'),
      embeddingModel('embed-gemini', 'gemini', 'gemini-embedding-001'),
      embeddingModel('embed-hang', 'sim-hang', 'embed-hang'),
      { id: 'chat-model', prices: { input: '1', output: '4' }, targets: [{ provider: 'sim', model: 'chat-model' }] },
    ],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
  };
}


describe.each(engines)('embeddings on %s', (engine) => {
  let harness: Harness;
  let double: EmbeddingsDouble;

  beforeAll(async () => {
    double = await startEmbeddingsUpstream({ openaiTokens: (inputs) => (JSON.stringify(inputs).includes('overreport') ? 5_000_000 : inputs.reduce<number>((sum, input) => sum + 3 + String(input).split(/\s+/).filter(Boolean).length, 0)) });
    harness = await startHarness({ engine, catalog: embeddingsCatalog(double), env: { TEST_UPSTREAM_KEY: 'sk-upstream', TEST_GEMINI_KEY: 'gemini-test-key' } });
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    await double?.close();
  });

  /** The account's charges once its holds are settled; the balance moved by exactly them. */
  const charges = (accountId: string, startUsd: string) => settledCharges(harness, accountId, startUsd, { excess: 'allowed' });

  it('the openai client (base64 by default, and float): the simulated vectors, the exact count billed to the nano', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const client = harness.client(secret);
    const inputs = ['The quick brown fox', 'jumps over the lazy dog, twice.'];
    const byDefault = await client.embeddings.create({ model: 'embed-small', input: inputs });
    const asFloats = await client.embeddings.create({ model: 'embed-small', input: inputs, encoding_format: 'float', dimensions: 64 });
    expect(byDefault.model).toBe('embed-small');
    expect(byDefault.data.map((entry) => entry.index)).toEqual([0, 1]);
    // Sent as float32: equal to the vector within float32's precision.
    byDefault.data.forEach((entry, index) => {
      const expected = simulatedVector(inputs[index]!, 1_536);
      expect(entry.embedding).toHaveLength(1_536);
      entry.embedding.forEach((value, position) => expect(value).toBeCloseTo(expected[position]!, 6));
    });
    expect(asFloats.data[1]!.embedding).toEqual(simulatedVector(inputs[1]!, 64));
    const tokens = await runYielding(countEmbeddingTokens(inputs));
    expect(byDefault.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
    const charged = await charges(accountId, '1');
    expect(charged.map((entry) => entry.amountNanos)).toEqual([costOfTokens(tokens, PER_MILLION), costOfTokens(tokens, PER_MILLION)]);
    expect(charged.map((entry) => entry.inputTokens)).toEqual([tokens, tokens]);
  });

  it('an OpenAI-compatible upstream is passed through: base64 vectors byte for byte, the reported tokens billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const body = { model: 'embed-relay', input: ['alpha beta', 'gamma'], encoding_format: 'base64', dimensions: 4, user: 'user-1' };
    const response = await harness.post('/v1/embeddings', body, secret);
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { model: string; data: Array<{ embedding: string }>; usage: { prompt_tokens: number } };
    const forwarded = double.requests.at(-1)!;
    expect(forwarded.path).toBe('/v1/embeddings');
    expect(forwarded.headers.authorization).toBe('Bearer sk-upstream');
    expect(forwarded.body).toEqual({ ...body, model: 'text-embedding-3-small' });
    const sent = JSON.parse(double.answers.at(-1)!.text) as { data: Array<{ embedding: string }> };
    expect(answer.data.map((entry) => entry.embedding)).toEqual(sent.data.map((entry) => entry.embedding));
    expect(decodeBase64Embedding(answer.data[1]!.embedding)).toEqual(doubleVector('gamma', 4).map((value) => Math.fround(value)));
    expect(answer.model).toBe('embed-relay');
    const reported = double.answers.at(-1)!.reportedTokens!;
    expect(answer.usage.prompt_tokens).toBe(reported);
    const charged = await charges(accountId, '1');
    expect(charged.map((entry) => entry.amountNanos)).toEqual([costOfTokens(reported, PER_MILLION)]);
  });

  it('Gemini: 150 texts go as two batches in order, written as the client asked; without a count the exact count is billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const inputs = Array.from({ length: 150 }, (_, index) => `document number ${index}`);
    const before = double.requests.length;
    const answer = await harness.client(secret).embeddings.create({ model: 'embed-gemini', input: inputs, dimensions: 6 });
    const batches = double.requests.slice(before);
    expect(batches.map((request) => request.path)).toEqual(['/v1beta/models/gemini-embedding-001:batchEmbedContents', '/v1beta/models/gemini-embedding-001:batchEmbedContents']);
    expect(batches.map((request) => (request.body.requests as unknown[]).length)).toEqual([100, 50]);
    expect(batches[0]!.headers['x-goog-api-key']).toBe('gemini-test-key');
    expect(batches[1]!.body.requests).toContainEqual({ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'document number 149' }] }, outputDimensionality: 6 });
    expect(answer.data).toHaveLength(150);
    answer.data.forEach((entry, index) => {
      expect(entry.index).toBe(index);
      doubleVector(inputs[index]!, 6).forEach((value, position) => expect(entry.embedding[position]).toBeCloseTo(value, 6));
    });
    const tokens = await runYielding(countEmbeddingTokens(inputs));
    expect(answer.usage.prompt_tokens).toBe(tokens);
    expect((await charges(accountId, '1')).map((entry) => entry.amountNanos)).toEqual([costOfTokens(tokens, PER_MILLION)]);
  });

  it('Gemini refuses token arrays with a 400, and nothing is billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/embeddings', { model: 'embed-gemini', input: [[1, 2, 3]] }, secret);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('Token arrays cannot be embedded by this model');
    expect(await charges(accountId, '1')).toEqual([]);
  });

  it('a race of 60 on a balance for 10 admits exactly 10', async () => {
    // The double reports far more than any hold covers: each charge is its hold (the excess recorded).
    const body = { model: 'embed-relay', input: `overreport ${'word '.repeat(200)}` };
    // What one request holds: the bound of its body (with the provider's margin) at the input price.
    const billing = harness.gateway.billing;
    const hold = billing.holdAmount('embed-relay', boundInputTokens(body, { imageTokens: billing.inputBound('embed-relay').imageTokens }), 0);
    const balance = nanosToUsd(hold * 10n + hold / 2n);
    const { accountId, secret } = await harness.newAccount(balance);
    const responses = await Promise.all(Array.from({ length: 60 }, () => harness.post('/v1/embeddings', body, secret)));
    await Promise.all(responses.map((response) => response.text()));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 403)).toHaveLength(50);
    const charged = await charges(accountId, balance);
    expect(charged.map((entry) => entry.amountNanos)).toEqual(Array.from({ length: 10 }, () => hold));
  });

  it('a chat model on /v1/embeddings, and an embedding model on chat: 404 model_not_found, nothing forwarded or billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const before = double.requests.length;
    const onEmbeddings = await harness.post('/v1/embeddings', { model: 'chat-model', input: 'hi' }, secret);
    expect(onEmbeddings.status).toBe(404);
    expect(await onEmbeddings.json()).toEqual({ error: { message: "The model 'chat-model' does not serve /v1/embeddings.", type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
    const onChat = await harness.post('/v1/chat/completions', { model: 'embed-relay', messages: [{ role: 'user', content: 'hi' }] }, secret);
    expect(onChat.status).toBe(404);
    expect(await onChat.json()).toEqual({ error: { message: "The model 'embed-relay' does not serve /v1/chat/completions.", type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
    expect(double.requests.length).toBe(before);
    expect(await charges(accountId, '1')).toEqual([]);
  });

  it('bad input gets OpenAI\'s 400 and costs nothing', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const before = double.requests.length;
    const cases: Array<[unknown, string | null, string]> = [
      [{ model: 'embed-relay', input: [] }, 'input', 'empty_array'],
      [{ model: 'embed-relay', input: Array.from({ length: 2_049 }, () => 'x') }, 'input', 'array_above_max_length'],
      [{ model: 'embed-relay', input: '' }, 'input', 'invalid_value'],
      [{ model: 'embed-relay', input: ['a', ''] }, 'input', 'invalid_value'],
      [{ model: 'embed-relay', input: ['a', 1] }, 'input', 'invalid_value'],
      [{ model: 'embed-relay', input: 42 }, 'input', 'invalid_type'],
      [{ model: 'embed-relay' }, 'input', 'missing_required_parameter'],
      [{ input: 'hi' }, 'model', 'missing_required_parameter'],
      [{ model: 'embed-relay', input: 'hi', encoding_format: 'int8' }, 'encoding_format', 'invalid_value'],
      [{ model: 'embed-relay', input: 'hi', dimensions: 0 }, 'dimensions', 'integer_below_min_value'],
      [{ model: 'embed-relay', input: 'hi', dimensions: '8' }, 'dimensions', 'invalid_type'],
      [{ model: 'embed-relay', input: 'hi', colour: 'blue' }, 'colour', 'unknown_parameter'],
    ];
    for (const [body, param, code] of cases) {
      const response = await harness.post('/v1/embeddings', body as object, secret);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      const error = ((await response.json()) as { error: { param?: string; code: string; type: string } }).error;
      expect({ param: error.param ?? null, code: error.code, type: error.type }).toEqual({ param, code, type: 'invalid_request_error' });
    }
    const malformed = await harness.post('/v1/embeddings', '{"model": "embed-relay", "input": ', secret);
    expect(malformed.status).toBe(400);
    expect(double.requests.length).toBe(before);
    expect(await charges(accountId, '1')).toEqual([]);
  });

  it('an upstream that hangs is given up at its first-byte timeout: the spec\'s 503 as on every endpoint, nothing billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/embeddings', { model: 'embed-hang', input: 'hi' }, secret);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ error: { message: 'The requested model is currently unavailable.', type: 'service_api_error', code: 'model_not_found' } });
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(await charges(accountId, '1')).toEqual([]);
  });

  it('an upstream answering garbage, or too few vectors, is a failure: the spec\'s 503, nothing billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    for (const input of ['answer-garbage', ['answer-short', 'second']]) {
      const response = await harness.post('/v1/embeddings', { model: 'embed-relay', input }, secret);
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
    }
    expect(await charges(accountId, '1')).toEqual([]);
  });

  it('a client that leaves while the upstream works stops the upstream call, and nothing is billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const before = double.abortedCount();
    const leaving = new AbortController();
    const pending = fetch(`${harness.baseUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify({ model: 'embed-relay', input: 'answer-slowly' }),
      signal: leaving.signal,
    });
    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 1);
    leaving.abort();
    await expect(pending).rejects.toThrow();
    await waitFor(async () => double.abortedCount() === before + 1);
    expect(await charges(accountId, '1')).toEqual([]);
  });

  it('the request log and the usage report name the endpoint', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    expect((await harness.post('/v1/embeddings', { model: 'embed-small', input: 'logged' }, secret)).status).toBe(200);
    const logged = async () => (await harness.store.listRequestLog({ accountId }, { limit: 10 })).rows;
    await waitFor(async () => (await logged()).length === 1);
    const rows = await logged();
    expect(rows[0]).toMatchObject({ surface: 'embeddings', model: 'embed-small', status: 200 });
  });
});

function nanosToUsd(nanos: bigint): string {
  return `${nanos / 1_000_000_000n}.${(nanos % 1_000_000_000n).toString().padStart(9, '0')}`;
}

describe('embeddings under a tokens-per-minute limit', () => {
  let harness: Harness;
  let double: EmbeddingsDouble;

  beforeAll(async () => {
    double = await startEmbeddingsUpstream();
    const catalog = embeddingsCatalog(double) as { rate_limits: Record<string, number> };
    catalog.rate_limits = { requests: 10_000, window_seconds: 60, tokens_per_minute: 1_000 };
    harness = await startHarness({ catalog, env: { TEST_UPSTREAM_KEY: 'sk-upstream', TEST_GEMINI_KEY: 'gemini-test-key' } });
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    await double?.close();
  });

  it('counts the bound of each request against the key\'s minute, with OpenAI\'s headers, and a 429 once it is spent', async () => {
    const { secret } = await harness.newAccount('1');
    const body = { model: 'embed-small', input: 'many words '.repeat(150) };
    const first = await harness.post('/v1/embeddings', body, secret);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('1000');
    const remaining = Number(first.headers.get('x-ratelimit-remaining-tokens'));
    expect(remaining).toBeLessThan(1_000 - 300);
    const statuses: number[] = [];
    for (let index = 0; index < 4; index += 1) statuses.push((await harness.post('/v1/embeddings', body, secret)).status);
    expect(statuses).toContain(429);
  });
});
