/**
 * `POST /v1/moderations` end to end, on SQLite and on PostgreSQL + Redis: the official openai
 * client against the simulated provider (deterministic results that flag a few words) and an
 * OpenAI-compatible upstream passed through; a request without a model is moderated with OpenAI's
 * default model when the catalog has it; billed on the gateway's own count of the input (OpenAI
 * reports none) at the model's input price, to the nano.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { runYielding } from '../../src/lib/run-yielding.js';
import { countModerationTokens } from '../../src/protocol/moderations.js';
import { engines } from '../support/databases.js';
import { startEmbeddingsUpstream, type EmbeddingsDouble } from '../support/embeddings-upstream.js';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait-for.js';

const PRICE = '0.5';

function moderationsCatalog(double: EmbeddingsDouble): unknown {
  return {
    providers: [
      { name: 'sim', type: 'simulated' },
      { name: 'relay', type: 'openai', base_url: double.openaiBaseUrl, api_key_env: 'TEST_UPSTREAM_KEY' },
    ],
    models: [
      { id: 'omni-moderation-latest', endpoints: ['moderations'], prices: { input: PRICE, output: '0' }, targets: [{ provider: 'sim', model: 'omni-moderation-latest' }] },
      { id: 'moderation-relay', endpoints: ['moderations'], prices: { input: PRICE, output: '0' }, targets: [{ provider: 'relay', model: 'omni-moderation-2024-09-26' }] },
      { id: 'chat-model', prices: { input: '1', output: '4' }, targets: [{ provider: 'sim', model: 'chat-model' }] },
    ],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
  };
}


describe.each(engines)('moderations on %s', (engine) => {
  let harness: Harness;
  let double: EmbeddingsDouble;

  beforeAll(async () => {
    double = await startEmbeddingsUpstream();
    harness = await startHarness({ engine, catalog: moderationsCatalog(double), env: { TEST_UPSTREAM_KEY: 'sk-upstream' } });
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    await double?.close();
  });

  async function charges(accountId: string) {
    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    return (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge').map((entry) => entry.amountNanos);
  }

  it('the openai client, no model named: OpenAI\'s default model, one result per input, the input counted and billed', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const input = ['Have a lovely day.', 'I will attack you.'];
    const answer = await harness.client(secret).moderations.create({ input });
    expect(answer.model).toBe('omni-moderation-latest');
    expect(answer.id).toMatch(/^modr-/);
    expect(answer.results.map((result) => result.flagged)).toEqual([false, true]);
    expect(answer.results[1]!.categories.violence).toBe(true);
    expect(Object.keys(answer.results[0]!.category_scores)).toHaveLength(13);
    const tokens = await runYielding(countModerationTokens({ model: 'omni-moderation-latest', input }));
    expect(await charges(accountId)).toEqual([costOfTokens(tokens, usdToNanos(PRICE))]);
  });

  it('text and image parts are one input with one result; the image counts its allowance', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const text = 'What is in this picture, idiot?';
    const url = 'data:image/png;base64,iVBORw0KGgo=';
    const input = [
      { type: 'text' as const, text },
      { type: 'image_url' as const, image_url: { url } },
    ];
    const answer = await harness.client(secret).moderations.create({ model: 'omni-moderation-latest', input });
    expect(answer.results).toHaveLength(1);
    expect(answer.results[0]!.categories.harassment).toBe(true);
    expect(answer.results[0]!.category_applied_input_types.violence).toEqual(['text', 'image']);
    const tokens = await runYielding(countModerationTokens({ model: 'omni-moderation-latest', input: [{ type: 'text', text }, { type: 'image_url', url }] }));
    expect(await charges(accountId)).toEqual([costOfTokens(tokens, usdToNanos(PRICE))]);
  });

  it('an OpenAI-compatible upstream is passed through: the body forwarded with its model, the results as sent', async () => {
    const { secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/moderations', { model: 'moderation-relay', input: ['one', 'two', 'three'] }, secret);
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { model: string; results: Array<{ flagged: boolean }> };
    expect(double.requests.at(-1)).toMatchObject({ path: '/v1/moderations', body: { model: 'omni-moderation-2024-09-26', input: ['one', 'two', 'three'] } });
    expect(answer.model).toBe('moderation-relay');
    expect(answer.results.map((result) => result.flagged)).toEqual([false, true, false]);
  });

  it('bad input gets OpenAI\'s 400, a chat model gets 404, and neither costs anything', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const cases: Array<[object, string, string]> = [
      [{ model: 'moderation-relay' }, 'input', 'missing_required_parameter'],
      [{ model: 'moderation-relay', input: [] }, 'input', 'empty_array'],
      [{ model: 'moderation-relay', input: 7 }, 'input', 'invalid_type'],
      [{ model: 'moderation-relay', input: [{ type: 'audio', audio: 'x' }] }, 'input[0].type', 'invalid_value'],
      [{ model: 'moderation-relay', input: 'hi', extra: true }, 'extra', 'unknown_parameter'],
    ];
    for (const [body, param, code] of cases) {
      const response = await harness.post('/v1/moderations', body, secret);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { param: string; code: string } }).error).toMatchObject({ param, code });
    }
    const wrong = await harness.post('/v1/moderations', { model: 'chat-model', input: 'hi' }, secret);
    expect(wrong.status).toBe(404);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toBe("The model 'chat-model' does not serve /v1/moderations.");
    expect(await charges(accountId)).toEqual([]);
  });
});
