/**
 * `POST /v1/embeddings` through the clients people embed with, against the real gateway on SQLite
 * and on PostgreSQL + Redis: LangChain's `OpenAIEmbeddings` (its own copy of openai-node, which asks
 * for base64) and the Vercel AI SDK's `embed`/`embedMany` with `@ai-sdk/openai` (which asks for
 * floats). Each client gets the simulated provider's vectors in input order, or an OpenAI-compatible
 * upstream's passed through; the usage it reports is the count billed; and every request is charged
 * exactly its tokens × the input price, to the nano.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { OpenAIEmbeddings } from '@langchain/openai';
import { embed, embedMany } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { runYielding } from '../../src/lib/run-yielding.js';
import { countEmbeddingTokens } from '../../src/protocol/embeddings.js';
import { SIMULATED_EMBEDDING_DIMENSIONS, simulatedVector } from '../../src/providers/simulated/embeddings.js';
import { engines } from '../support/databases.js';
import { doubleVector, DOUBLE_DIMENSIONS, startEmbeddingsUpstream, type EmbeddingsDouble } from '../support/embeddings-upstream.js';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

const INPUT_PRICE = '0.02';
const PER_MILLION = usdToNanos(INPUT_PRICE);

/** As in embeddings.test.ts: one simulated embedding model and one relayed to the double, plus a chat model. */
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
      { name: 'relay', type: 'openai', base_url: double.openaiBaseUrl, api_key_env: 'TEST_UPSTREAM_KEY' },
    ],
    models: [
      embeddingModel('embed-small', 'sim', 'embed-small'),
      embeddingModel('embed-relay', 'relay', 'text-embedding-3-small'),
      { id: 'chat-model', prices: { input: '1', output: '4' }, targets: [{ provider: 'sim', model: 'chat-model' }] },
    ],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
  };
}


/** Charges in ascending order: concurrent batches settle in any order, so the test compares them sorted. */
function ascending(amounts: bigint[]): bigint[] {
  return [...amounts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The exact count the gateway bills when the upstream reports none it trusts (the simulated one reports this count). */
function exactTokens(inputs: string[]): Promise<number> {
  return runYielding(countEmbeddingTokens(inputs));
}

/** A float32-decoded vector (base64 on the wire) against the float64 one: equal to float32's precision. */
function expectCloseVector(actual: number[], expected: number[]): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((value, position) => expect(value).toBeCloseTo(expected[position]!, 6));
}

describe.each(engines)('embedding clients on %s', (engine) => {
  let harness: Harness;
  let double: EmbeddingsDouble;

  beforeAll(async () => {
    double = await startEmbeddingsUpstream();
    harness = await startHarness({ engine, catalog: embeddingsCatalog(double), env: { TEST_UPSTREAM_KEY: 'sk-upstream' } });
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    await double?.close();
  });

  /** The account's charges once its holds are settled; the balance moved by exactly them and nothing stays reserved. */
  async function charges(accountId: string, startUsd: string): Promise<bigint[]> {
    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    const charged = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    const account = (await harness.store.findAccount(accountId))!;
    expect(account.balanceNanos).toBe(usdToNanos(startUsd) - charged.reduce((sum, entry) => sum + entry.amountNanos, 0n));
    expect(account.reservedNanos).toBe(0n);
    return charged.map((entry) => entry.amountNanos);
  }

  function langchain(secret: string, fields: ConstructorParameters<typeof OpenAIEmbeddings>[0] = {}): OpenAIEmbeddings {
    // No retries: a refusal must reach the test as the gateway sent it, and be charged once at most.
    return new OpenAIEmbeddings({ model: 'embed-small', apiKey: secret, configuration: { baseURL: `${harness.baseUrl}/v1` }, maxRetries: 0, ...fields });
  }

  function aiProvider(secret: string) {
    return createOpenAI({ baseURL: `${harness.baseUrl}/v1`, apiKey: secret });
  }

  describe('LangChain OpenAIEmbeddings', () => {
    it('embedQuery and embedDocuments in batches: base64 decoded to the simulated vectors, in input order, each batch charged its exact count', async () => {
      const { accountId, secret } = await harness.newAccount('1');
      // Five documents in batches of two: three requests, two at a time (LangChain's default concurrency).
      const embeddings = langchain(secret, { batchSize: 2 });
      const query = 'Which harbour has the oldest lighthouse?';
      // LangChain strips newlines before sending (stripNewLines); the vector is that of the text sent.
      const documents = ['Bergen has a harbour.', 'The lighthouse at\nLindesnes is old.', 'Oslo', 'Fjords are deep and narrow.', 'Stavanger'];
      const sent = documents.map((document) => document.replace(/\n/g, ' '));

      const queryVector = await embeddings.embedQuery(query);
      const documentVectors = await embeddings.embedDocuments(documents);

      expectCloseVector(queryVector, simulatedVector(query, SIMULATED_EMBEDDING_DIMENSIONS));
      expect(documentVectors).toHaveLength(documents.length);
      documentVectors.forEach((vector, index) => expectCloseVector(vector, simulatedVector(sent[index]!, SIMULATED_EMBEDDING_DIMENSIONS)));
      // Distinct texts, distinct vectors: a shuffled answer could not pass the loop above by accident.
      expect(new Set(documentVectors.map((vector) => vector[0])).size).toBe(documents.length);

      const batches = [[query], sent.slice(0, 2), sent.slice(2, 4), sent.slice(4)];
      const expected = await Promise.all(batches.map(async (batch) => costOfTokens(await exactTokens(batch), PER_MILLION)));
      expect(ascending(await charges(accountId, '1'))).toEqual(ascending(expected));
    });

    it('dimensions and encodingFormat float: the vectors exactly, at the length asked', async () => {
      const { accountId, secret } = await harness.newAccount('1');
      const embeddings = langchain(secret, { dimensions: 64, encodingFormat: 'float' });
      const documents = ['first of two', 'second of two'];
      const vectors = await embeddings.embedDocuments(documents);
      expect(vectors).toEqual(documents.map((document) => simulatedVector(document, 64)));
      expect(await charges(accountId, '1')).toEqual([costOfTokens(await exactTokens(documents), PER_MILLION)]);
    });

    it('through an OpenAI-compatible upstream: base64 asked and passed through, the upstream\'s vectors, its reported tokens billed', async () => {
      const { accountId, secret } = await harness.newAccount('1');
      const before = double.requests.length;
      const documents = ['alpha beta', 'gamma', 'delta epsilon zeta'];
      const vectors = await langchain(secret, { model: 'embed-relay' }).embedDocuments(documents);
      const forwarded = double.requests.slice(before);
      expect(forwarded).toHaveLength(1);
      expect(forwarded[0]!.body).toMatchObject({ model: 'text-embedding-3-small', input: documents, encoding_format: 'base64' });
      // The double's vectors were sent as float32, so the client decodes exactly their float32 values.
      expect(vectors).toEqual(documents.map((document) => doubleVector(document, DOUBLE_DIMENSIONS).map((value) => Math.fround(value))));
      const reported = double.answers.at(-1)!.reportedTokens!;
      expect(reported).toBe(3 * 3 + 6);
      expect(await charges(accountId, '1')).toEqual([costOfTokens(reported, PER_MILLION)]);
    });

    it('a chat model asked for embeddings: the gateway\'s 404 reaches the caller unretried, and nothing is charged', async () => {
      const { accountId, secret } = await harness.newAccount('1');
      const refused = langchain(secret, { model: 'chat-model' }).embedQuery('hi');
      await expect(refused).rejects.toMatchObject({ status: 404, lc_error_code: 'MODEL_NOT_FOUND', message: expect.stringContaining("The model 'chat-model' does not serve /v1/embeddings.") });
      expect(await charges(accountId, '1')).toEqual([]);
    });
  });

  describe('Vercel AI SDK', () => {
    it('embed: floats asked, the simulated vector exactly, and the usage reported is the count charged', async () => {
      const { accountId, secret } = await harness.newAccount('1');
      const value = 'sunny day at the beach';
      const result = await embed({ model: aiProvider(secret).embedding('embed-small'), value, maxRetries: 0 });
      // Floats on the wire: no float32 rounding, so the vector is equal, not merely close.
      expect(result.embedding).toEqual(simulatedVector(value, SIMULATED_EMBEDDING_DIMENSIONS));
      const tokens = await exactTokens([value]);
      expect(result.usage).toEqual({ tokens });
      expect(await charges(accountId, '1')).toEqual([costOfTokens(tokens, PER_MILLION)]);
    });

    it('embedMany over 2,048 values: split into the 2,048 OpenAI allows and the rest, joined in order, usage summed and each call charged', async () => {
      const { accountId, secret } = await harness.newAccount('1');
      // The SDK sends at most 2,048 values a call (OpenAI's maxItems, the gateway's bound too): 2,100 is two calls.
      const values = Array.from({ length: 2_100 }, (_, index) => `passage ${index} of the corpus`);
      const result = await embedMany({ model: aiProvider(secret).embedding('embed-small'), values, dimensions: 4, maxRetries: 0 });
      expect(result.embeddings).toHaveLength(values.length);
      result.embeddings.forEach((vector, index) => expect(vector).toEqual(simulatedVector(values[index]!, 4)));
      const first = await exactTokens(values.slice(0, 2_048));
      const rest = await exactTokens(values.slice(2_048));
      expect(result.usage).toEqual({ tokens: first + rest });
      expect(ascending(await charges(accountId, '1'))).toEqual(ascending([costOfTokens(first, PER_MILLION), costOfTokens(rest, PER_MILLION)]));
    });

    it('embedMany through an OpenAI-compatible upstream: the upstream\'s vectors in order, its reported tokens as usage and as the charge', async () => {
      const { accountId, secret } = await harness.newAccount('1');
      const before = double.requests.length;
      const values = ['one', 'two words', 'and three words'];
      const result = await embedMany({ model: aiProvider(secret).embedding('embed-relay'), values, maxRetries: 0 });
      const forwarded = double.requests.slice(before);
      expect(forwarded.map((request) => request.body)).toEqual([{ model: 'text-embedding-3-small', input: values, encoding_format: 'float' }]);
      expect(result.embeddings).toEqual(values.map((value) => doubleVector(value)));
      const reported = double.answers.at(-1)!.reportedTokens!;
      expect(result.usage).toEqual({ tokens: reported });
      expect(await charges(accountId, '1')).toEqual([costOfTokens(reported, PER_MILLION)]);
    });

    it('a balance that cannot cover the hold: the SDK throws the gateway\'s 403 and nothing is charged', async () => {
      const { accountId, secret } = await harness.newAccount('0.000000001');
      const refused = embed({ model: aiProvider(secret).embedding('embed-small'), value: 'too dear', maxRetries: 0 });
      await expect(refused).rejects.toMatchObject({ statusCode: 403, message: 'Insufficient balance.' });
      expect(await charges(accountId, '0.000000001')).toEqual([]);
    });
  });
});
