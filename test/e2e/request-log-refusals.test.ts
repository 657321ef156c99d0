/**
 * Every answer of `/v1`, refusals included, is in the request log with the code its client saw:
 * a model whose only target is out of rotation answers 503 `model_not_found`, and each of those
 * answers has its row, with that code, counted in the usage report's errors (what the console's
 * overview shows); the row of the answer that took the target out names it. A malformed body, a
 * made-up key, a rate limit, a body too large and an unknown `/v1` route are logged too, the 401
 * with no account or key.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient, type AdminCall } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

type Row = Record<string, unknown>;
const N = 5;
const MAX_BODY_BYTES = 8_192;
const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'Tell me something.' }] });

describe.each(engines)('refusals in the request log on %s', (engine) => {
  let harness: Harness;
  let call: AdminCall;
  let viewer: string;

  beforeAll(async () => {
    harness = await startHarness({
      engine,
      catalog: { ...(testCatalog() as Record<string, unknown>), limits: { max_body_bytes: MAX_BODY_BYTES } },
      // One failure takes a target out of rotation, for the rest of the suite.
      router: { failureThreshold: 1, cooldownMs: 600_000 },
    });
    call = adminClient(harness.baseUrl);
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
  });

  afterAll(async () => {
    await harness?.close();
  });

  /** Sends a request; returns its request id, status and what its error body named (code, or type without one). */
  async function send(secret: string | null, path: string, body: string | object): Promise<{ requestId: string; status: number; code: string | null }> {
    const response = await harness.post(path, body, secret);
    const text = await response.text();
    const error = response.status >= 400 ? (JSON.parse(text) as { error: { code?: string; type: string } }).error : null;
    return { requestId: response.headers.get('x-request-id') ?? '', status: response.status, code: error === null ? null : error.code || error.type };
  }

  async function logged(query: string, count: number): Promise<Row[]> {
    return vi.waitFor(
      async () => {
        const answer = await call('GET', `/requests?${query}&limit=200`, viewer);
        expect(answer.status).toBe(200);
        const rows = answer.body.data as Row[];
        expect(rows).toHaveLength(count);
        return rows;
      },
      { timeout: 5_000, interval: 50 },
    );
  }

  const rowOf = async (requestId: string): Promise<Row> => (await logged(`request_id=${requestId}`, 1))[0]!;

  it("logs each 503 of a model whose only target is out of rotation, with the client's model_not_found, and counts it as an error", async () => {
    const { secret, accountId } = await harness.newAccount('5');
    // The first answer tries the only target, which fails and cools down.
    const first = await send(secret, '/v1/chat/completions', chat('broken-model'));
    expect(first).toMatchObject({ status: 503, code: 'model_not_found' });
    expect(await rowOf(first.requestId)).toMatchObject({ status: 503, error_code: 'model_not_found', model: 'broken-model', target: 'sim-fail-before/broken-model', account_id: accountId });
    const catalog = await call('GET', '/catalog', viewer);
    expect((catalog.body.targets as Row[]).find((target) => target.target === 'sim-fail-before/broken-model')).toMatchObject({ status: 'cooling_down' });

    const refused = [];
    for (let index = 0; index < N; index += 1) {
      refused.push(await send(secret, index % 2 === 0 ? '/v1/chat/completions' : '/v1/responses', index % 2 === 0 ? chat('broken-model') : { model: 'broken-model', input: 'Hi' }));
    }
    expect(refused.map((answer) => [answer.status, answer.code])).toEqual(Array(N).fill([503, 'model_not_found']));
    // Anthropic's clients are told the same 503 in their shape, which has a type and no code.
    const messages = await send(secret, '/v1/messages', { model: 'broken-model', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
    expect(messages).toMatchObject({ status: 503, code: 'overloaded_error' });

    const rows = await logged(`account=${accountId}&model=broken-model`, N + 2);
    const byId = new Map(rows.map((row) => [row.request_id, row]));
    for (const answer of refused) {
      expect(byId.get(answer.requestId)).toMatchObject({ status: 503, error_code: 'model_not_found', model: 'broken-model', target: null, cost_usd: '0' });
    }
    expect(byId.get(messages.requestId)).toMatchObject({ status: 503, error_code: 'overloaded_error', surface: 'anthropic-messages', target: null });

    const usage = await call('GET', `/usage?account=${accountId}&by=model`, viewer);
    expect(usage.status).toBe(200);
    expect((usage.body.total as Row).errors).toBe(N + 2);
    expect((usage.body.rows as Row[]).find((row) => row.group === 'broken-model')).toMatchObject({ errors: N + 2, requests: 0 });
  });

  it('logs the refusals before a model: a malformed body, a made-up key, a rate limit, a body too large, an unknown /v1 route', async () => {
    const { secret, accountId, keyId } = await harness.newAccount('5', { requestsPerWindow: 1 });
    const badJson = await send(secret, '/v1/chat/completions', '{"model": "model-5.6", ');
    expect(badJson).toMatchObject({ status: 400, code: 'service_api_error' });
    const limited = await send(secret, '/v1/chat/completions', chat('model-5.6'));
    expect(limited).toMatchObject({ status: 429, code: 'service_api_error' });
    const badKey = await send('sk-tg-made-up', '/v1/responses', { model: 'model-5.6', input: 'Hi' });
    expect(badKey).toMatchObject({ status: 401, code: 'service_api_error' });
    const noKey = await send(null, '/v1/chat/completions', chat('model-5.6'));
    expect(noKey).toMatchObject({ status: 401, code: 'service_api_error' });
    const other = await harness.newAccount('5');
    const tooLarge = await send(other.secret, '/v1/chat/completions', { ...chat('model-5.6'), padding: 'x'.repeat(MAX_BODY_BYTES) });
    expect(tooLarge).toMatchObject({ status: 413, code: 'request_too_large' });
    const unknownRoute = await send(other.secret, '/v1/chat/completion', chat('model-5.6'));
    expect(unknownRoute).toMatchObject({ status: 404, code: 'invalid_request_error' });

    expect(await rowOf(badJson.requestId)).toMatchObject({ status: 400, error_code: 'service_api_error', account_id: accountId, key_id: keyId, surface: 'chat-completions', model: null, cost_usd: '0' });
    expect(await rowOf(limited.requestId)).toMatchObject({ status: 429, error_code: 'service_api_error', account_id: accountId, key_id: keyId, model: null });
    for (const refusal of [badKey, noKey]) {
      expect(await rowOf(refusal.requestId)).toMatchObject({ status: 401, error_code: 'service_api_error', account_id: null, key_id: null, model: null, target: null });
    }
    expect(await rowOf(tooLarge.requestId)).toMatchObject({ status: 413, error_code: 'request_too_large', account_id: other.accountId, request_body: null });
    expect(await rowOf(unknownRoute.requestId)).toMatchObject({ status: 404, error_code: 'invalid_request_error', surface: null, model: null });

    // The usage report over every account counts them, those without an account included.
    const usage = await call('GET', '/usage?by=day', viewer);
    const all = await call('GET', '/requests?limit=200', viewer);
    const errorRows = (all.body.data as Row[]).filter((row) => row.error_code !== null);
    expect((usage.body.total as Row).errors).toBe(errorRows.length);
    expect(errorRows.filter((row) => row.account_id === null)).toHaveLength(3);
  });
});
