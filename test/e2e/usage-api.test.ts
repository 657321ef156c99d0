/**
 * `GET /admin/v1/usage` end to end on SQLite (and PostgreSQL with Redis when configured): charges
 * placed at chosen times through a second store on the same database (a fixed clock), plus real
 * requests through the gateway, summed per UTC day, hour, model, key and endpoint over a range,
 * with the errors the request log counted; the CSV export read back with an RFC 4180 reader.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { adminClient, type AdminCall } from '../support/admin-client.js';
import { parseCsvRecords } from '../support/csv.js';
import { engines } from '../support/databases.js';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';

type Row = Record<string, unknown>;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const DAY0 = Date.UTC(2026, 10, 2);
const iso = (time: number) => new Date(time).toISOString();

/** The test catalog, plus models that serve embeddings, moderations and speech (from the simulated provider). */
function catalogWithWholeAnswers(): unknown {
  const catalog = testCatalog() as { models: unknown[] } & Record<string, unknown>;
  catalog.models.push({ id: 'embed-small', endpoints: ['embeddings'], prices: { input: '0.02', output: '0' }, targets: [{ provider: 'sim', model: 'embed-small' }] });
  catalog.models.push({ id: 'omni-moderation-latest', endpoints: ['moderations'], prices: { input: '0.01', output: '0' }, targets: [{ provider: 'sim', model: 'omni-moderation-latest' }] });
  catalog.models.push({ id: 'speech-sim', endpoints: ['speech'], prices: { input: '15', output: '0' }, targets: [{ provider: 'sim', model: 'tts-sim' }] });
  return catalog;
}

describe.each(engines)('usage API on %s', (engine) => {
  let harness: Harness;
  let call: AdminCall;
  let viewer: string;
  let seeded: { accountId: string; keyA: string; keyB: string };

  beforeAll(async () => {
    harness = await startHarness({ engine, catalog: catalogWithWholeAnswers() });
    call = adminClient(harness.baseUrl);
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    const { accountId, keyId: keyA } = await harness.newAccount('100');
    const keyB = (await createKey(harness.store, { accountRef: accountId }, CLI_ACTOR)).key.id;
    seeded = { accountId, keyA, keyB };
    let clock = new Date(DAY0);
    const clocked: Store = await openStore(harness.database.url, { now: () => clock });
    try {
      let count = 0;
      const bill = async (at: number, keyId: string, model: string, costNanos: bigint, inputTokens: number, outputTokens: number, surface: string | undefined) => {
        clock = new Date(at);
        count += 1;
        const hold = { id: `hold_usage_api_${count}`, accountId, keyId, requestId: `req_usage_api_${count}`, model, amountNanos: costNanos, expiresAt: new Date(at + HOUR), ...(surface === undefined ? {} : { surface }) };
        expect(await clocked.openHold(hold)).toBe(true);
        expect(await clocked.settleHold(hold.id, { requestId: hold.requestId, keyId, model, costNanos, excessNanos: 0n, inputTokens, cachedInputTokens: 1, cacheWriteInputTokens: 2, outputTokens, reasoningTokens: 3 })).toBe(true);
      };
      await bill(DAY0 + 1 * HOUR, keyA, 'model-a', 1_000_000n, 100, 10, 'chat-completions');
      await bill(DAY0 + 1 * HOUR + 60_000, keyB, 'model-b', 2_000_000n, 200, 20, 'responses');
      await bill(DAY0 + 5 * HOUR, keyA, 'model-a', 3_000_000n, 300, 30, 'chat-completions');
      // A hold opened before the ledger recorded endpoints.
      await bill(DAY0 + DAY + 2 * HOUR, keyB, 'model-a', 4_000_000n, 400, 40, undefined);
      // Outside the range asked below.
      await bill(DAY0 + 3 * DAY, keyA, 'model-a', 9_000_000n, 900, 90, 'embeddings');
      const failure = { requestId: 'req_usage_api_failed', accountId, surface: 'chat-completions', target: null, status: 502, errorCode: 'upstream_error', stream: false, latencyMs: 5, firstByteMs: null, inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 0, reasoningTokens: 0, costNanos: 0n, requestBody: null, responseBody: null };
      await clocked.appendRequestLog([
        { ...failure, at: new Date(DAY0 + 1 * HOUR + 30_000), keyId: keyA, model: 'model-a' },
        { ...failure, requestId: 'req_usage_api_failed_2', at: new Date(DAY0 + DAY + 7 * HOUR), keyId: keyB, model: 'model-c', surface: 'embeddings' },
        { ...failure, requestId: 'req_usage_api_ok', at: new Date(DAY0 + DAY + 7 * HOUR), keyId: keyB, model: 'model-c', status: 200, errorCode: null },
      ]);
    } finally {
      await clocked.close();
    }
  });

  afterAll(async () => {
    await harness?.close();
  });

  const range = () => `account=${seeded.accountId}&from=${iso(DAY0)}&to=${iso(DAY0 + 2 * DAY)}`;

  async function usage(query: string): Promise<Row> {
    const answer = await call('GET', `/usage?${query}`, viewer);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body;
  }

  const pick = (rows: unknown) => (rows as Row[]).map((row) => [row.group, row.requests, row.input_tokens, row.output_tokens, row.errors, row.cost_usd]);

  it('sums per UTC day over the range (the default grouping), with a total', async () => {
    const report = await usage(range());
    expect(report).toMatchObject({ account_id: seeded.accountId, from: iso(DAY0), to: iso(DAY0 + 2 * DAY), by: 'day' });
    expect(pick(report.rows)).toEqual([
      [iso(DAY0), 3, 600, 60, 1, '0.006'],
      [iso(DAY0 + DAY), 1, 400, 40, 1, '0.004'],
    ]);
    expect(report.total).toEqual({ requests: 4, input_tokens: 1000, cached_input_tokens: 4, cache_write_input_tokens: 8, output_tokens: 100, reasoning_tokens: 12, errors: 2, cost_usd: '0.01', excess_usd: '0' });
  });

  it('sums per UTC hour, model and key', async () => {
    expect(pick((await usage(`${range()}&by=hour`)).rows)).toEqual([
      [iso(DAY0 + HOUR), 2, 300, 30, 1, '0.003'],
      [iso(DAY0 + 5 * HOUR), 1, 300, 30, 0, '0.003'],
      [iso(DAY0 + DAY + 2 * HOUR), 1, 400, 40, 0, '0.004'],
      [iso(DAY0 + DAY + 7 * HOUR), 0, 0, 0, 1, '0'],
    ]);
    expect(pick((await usage(`${range()}&by=model`)).rows)).toEqual([
      ['model-a', 3, 800, 80, 1, '0.008'],
      ['model-b', 1, 200, 20, 0, '0.002'],
      ['model-c', 0, 0, 0, 1, '0'],
    ]);
    expect(pick((await usage(`${range()}&by=key`)).rows)).toEqual(
      [
        [seeded.keyA, 2, 400, 40, 1, '0.004'],
        [seeded.keyB, 2, 600, 60, 1, '0.006'],
        // Sorted by code unit, as the report sorts (not by locale).
      ].sort((left, right) => (String(left[0]) < String(right[0]) ? -1 : 1)),
    );
  });

  it('sums per endpoint: charges under their hold\'s surface (`unknown` from before it was kept), errors under their route\'s', async () => {
    expect(pick((await usage(`${range()}&by=endpoint`)).rows)).toEqual([
      ['chat-completions', 2, 400, 40, 1, '0.004'],
      ['embeddings', 0, 0, 0, 1, '0'],
      ['responses', 1, 200, 20, 0, '0.002'],
      ['unknown', 1, 400, 40, 0, '0.004'],
    ]);
  });

  it('keeps to the range and the account', async () => {
    expect(pick((await usage(`account=${seeded.accountId}&by=day&from=${iso(DAY0 + DAY)}&to=${iso(DAY0 + DAY + 3 * HOUR)}`)).rows)).toEqual([[iso(DAY0 + DAY), 1, 400, 40, 0, '0.004']]);
    expect((await usage(`account=${seeded.accountId}&by=day`)).total).toMatchObject({ requests: 5, cost_usd: '0.019' });
    const other = await harness.newAccount('1');
    expect((await usage(`account=${other.accountId}&from=${iso(DAY0)}`)).rows).toEqual([]);
    // Every account: at least this one's charges.
    const everyone = await usage(`from=${iso(DAY0)}&to=${iso(DAY0 + 2 * DAY)}`);
    expect(everyone.account_id).toBeNull();
    expect((everyone.total as Row).requests).toBeGreaterThanOrEqual(4);
  });

  it('exports the same rows as CSV, the group column named after `by`', async () => {
    for (const by of ['day', 'hour', 'model', 'key', 'endpoint']) {
      const json = await usage(`${range()}&by=${by}`);
      const response = await fetch(`${harness.baseUrl}/admin/v1/usage?${range()}&by=${by}&format=csv`, { headers: { authorization: `Bearer ${viewer}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename="usage-by-${by}.csv"`);
      const { header, records } = parseCsvRecords(await response.text());
      expect(header).toEqual([by, 'requests', 'input_tokens', 'cached_input_tokens', 'cache_write_input_tokens', 'output_tokens', 'reasoning_tokens', 'errors', 'cost_usd', 'excess_usd']);
      expect(records).toEqual((json.rows as Row[]).map(({ group, ...totals }) => ({ [by]: group, ...Object.fromEntries(Object.entries(totals).map(([name, value]) => [name, String(value)])) })));
    }
  });

  it('counts real requests through the gateway: charges from the ledger, errors from the request log', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    for (const model of ['model-5.6', 'model-5.6', 'mid-fail-model']) {
      await (await harness.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }] }, secret)).text();
    }
    const ledger = await harness.store.listLedger(accountId);
    const charges = ledger.filter((entry) => entry.kind === 'charge');
    const expected = charges.filter((entry) => entry.model === 'model-5.6');
    const report = await vi.waitFor(
      async () => {
        const answer = await usage(`account=${accountId}&by=model`);
        expect((answer.total as Row).errors).toBe(1);
        return answer;
      },
      { timeout: 5_000, interval: 50 },
    );
    const rows = report.rows as Row[];
    expect(rows.find((row) => row.group === 'model-5.6')).toMatchObject({
      requests: 2,
      errors: 0,
      input_tokens: expected.reduce((sum, entry) => sum + entry.inputTokens, 0),
      output_tokens: expected.reduce((sum, entry) => sum + entry.outputTokens, 0),
    });
    expect(rows.find((row) => row.group === 'mid-fail-model')).toMatchObject({ errors: 1 });
    const totalNanos = charges.reduce((sum, entry) => sum + entry.amountNanos, 0n);
    expect(BigInt(Math.round(Number((report.total as Row).cost_usd) * 1e9))).toBe(totalNanos);
  });

  it('counts real requests by endpoint: chat, responses, messages, embeddings, moderations and speech, each charge under the endpoint it came through', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const answers = await Promise.all([
      harness.post('/v1/chat/completions', { model: 'model-5.6', messages: [{ role: 'user', content: 'Hi' }] }, secret),
      harness.post('/v1/responses', { model: 'model-5.6', input: 'Hi' }, secret),
      harness.post('/v1/messages', { model: 'model-5.6', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }, secret),
      harness.post('/v1/embeddings', { model: 'embed-small', input: ['one', 'two words'] }, secret),
      harness.post('/v1/embeddings', { model: 'embed-small', input: 'three more words' }, secret),
      harness.post('/v1/moderations', { model: 'omni-moderation-latest', input: 'Is this fine?' }, secret),
      harness.post('/v1/audio/speech', { model: 'speech-sim', voice: 'nova', input: 'Hello there.', response_format: 'wav' }, secret),
      // A chat model does not serve embeddings: refused (404 model_not_found), counted as an error there.
      harness.post('/v1/embeddings', { model: 'model-5.6', input: 'no' }, secret),
    ]);
    expect(await Promise.all(answers.map(async (answer) => [answer.status, (await answer.text()).length > 0]))).toEqual([...Array(7).fill([200, true]), [404, true]]);
    const charges = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    const report = await vi.waitFor(
      async () => {
        const answer = await usage(`account=${accountId}&by=endpoint`);
        expect((answer.total as Row).errors).toBe(1);
        return answer;
      },
      { timeout: 5_000, interval: 50 },
    );
    const expected = ['anthropic-messages', 'chat-completions', 'embeddings', 'moderations', 'responses', 'speech'].map((surface) => {
      const billed = charges.filter((entry) => entry.surface === surface);
      const costNanos = billed.reduce((sum, entry) => sum + entry.amountNanos, 0n);
      return [surface, billed.length, billed.reduce((sum, entry) => sum + entry.inputTokens, 0), surface === 'embeddings' ? 1 : 0, costNanos];
    });
    const rows = (report.rows as Row[]).map((row) => [row.group, row.requests, row.input_tokens, row.errors, BigInt(Math.round(Number(row.cost_usd) * 1e9))]);
    expect(rows).toEqual(expected);
    expect(expected.map((row) => row[1])).toEqual([1, 1, 2, 1, 1, 1]);
  });
});
