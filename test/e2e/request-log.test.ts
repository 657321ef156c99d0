/**
 * The request log end to end: real requests through the real server (SQLite, and PostgreSQL with
 * Redis when configured) show up in `GET /admin/v1/requests` with the right fields, a failed one
 * with its error code, a stream with its time to first byte; every filter (the endpoint's too),
 * cursor pages, the CSV export read back with an RFC 4180 reader, bodies only for a model that
 * logs them, refusals, rows written by the shutdown flush, and no rows with `log.enabled: false`.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient, allPages, type AdminCall } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { parseCsvRecords } from '../support/csv.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

type Row = Record<string, unknown>;

/** The test catalog, plus a model whose prompts and answers are kept (cut at 64 bytes). */
function catalogWithLoggedBodies(extra: Record<string, unknown> = {}): unknown {
  const catalog = testCatalog() as { models: Array<Record<string, unknown>> } & Record<string, unknown>;
  catalog.models.push({ id: 'logged-model', prices: { input: '1', output: '4' }, max_output_tokens: 512, targets: [{ provider: 'sim', model: 'logged-model' }], log_bodies: { max_bytes: 64 } });
  return { ...catalog, ...extra };
}

const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Tell me something.' }], ...extra });

describe.each(engines)('request log on %s', (engine) => {
  let harness: Harness;
  let call: AdminCall;
  let viewer: string;

  beforeAll(async () => {
    harness = await startHarness({ engine, catalog: catalogWithLoggedBodies() });
    call = adminClient(harness.baseUrl);
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
  });

  afterAll(async () => {
    await harness?.close();
  });

  /** Sends a request and returns its request id, after reading the whole answer. */
  async function send(secret: string, path: string, body: object): Promise<{ requestId: string; status: number; text: string }> {
    const response = await harness.post(path, body, secret);
    const text = await response.text();
    return { requestId: response.headers.get('x-request-id') ?? '', status: response.status, text };
  }

  /** The log rows of `query`, once `count` of them are there (rows are written in batches, shortly after). */
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

  it('records a JSON answer with its account, key, surface, model, target, tokens and cost (the ledger charge)', async () => {
    const { accountId, keyId, secret } = await harness.newAccount('5');
    const sent = await send(secret, '/v1/chat/completions', chat('model-5.6'));
    expect(sent.status).toBe(200);
    const [row] = await logged(`request_id=${sent.requestId}`, 1);
    const [charge] = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(charge).toBeDefined();
    expect(row).toMatchObject({
      request_id: sent.requestId,
      account_id: accountId,
      key_id: keyId,
      surface: 'chat-completions',
      model: 'model-5.6',
      target: 'sim/model-5.6',
      status: 200,
      error_code: null,
      stream: false,
      input_tokens: charge?.inputTokens,
      cached_input_tokens: charge?.cachedInputTokens,
      output_tokens: charge?.outputTokens,
      reasoning_tokens: charge?.reasoningTokens,
      request_body: null,
      response_body: null,
    });
    expect(Number(row?.input_tokens)).toBeGreaterThan(0);
    expect(row?.cost_usd).not.toBe('0');
    const costNanos = BigInt(Math.round(Number(row?.cost_usd) * 1e9));
    expect(costNanos).toBe(charge?.amountNanos);
    expect(Number(row?.latency_ms)).toBeGreaterThanOrEqual(0);
    expect(Number(row?.first_byte_ms)).toBeLessThanOrEqual(Number(row?.latency_ms) + 1);
    expect(Date.parse(String(row?.at))).toBeLessThanOrEqual(Date.now());
  });

  it('records a stream with its time to first byte, and the Responses surface', async () => {
    const { secret } = await harness.newAccount('5');
    const sent = await send(secret, '/v1/chat/completions', chat('slow-model', { stream: true }));
    expect(sent.text).toContain('[DONE]');
    const [row] = await logged(`request_id=${sent.requestId}`, 1);
    expect(row).toMatchObject({ stream: true, status: 200, error_code: null, model: 'slow-model', target: 'sim-slow/slow-model' });
    // The simulated upstream paces its chunks 40 ms apart: the first byte comes well before the last.
    expect(row?.first_byte_ms).toEqual(expect.any(Number));
    expect(Number(row?.latency_ms)).toBeGreaterThan(Number(row?.first_byte_ms));
    expect(Number(row?.output_tokens)).toBeGreaterThan(0);

    const responses = await send(secret, '/v1/responses', { model: 'model-5.6', input: 'Hi' });
    const [answer] = await logged(`request_id=${responses.requestId}`, 1);
    expect(answer).toMatchObject({ surface: 'responses', stream: false, status: 200 });
  });

  it('records failures with their error code: every target down (503), a failed answer (502), a stream cut midway (200), a balance too low (403)', async () => {
    const { secret, accountId } = await harness.newAccount('5');
    // broken-model's only target fails: the row names it (its refusals once it is out of rotation
    // are in request-log-refusals.test.ts).
    const broken = await send(secret, '/v1/chat/completions', chat('broken-model'));
    expect(broken.status).toBe(503);
    const [brokenRow] = await logged(`request_id=${broken.requestId}`, 1);
    expect(brokenRow).toMatchObject({ status: 503, error_code: 'model_not_found', target: 'sim-fail-before/broken-model', cost_usd: '0', input_tokens: 0, stream: false, model: 'broken-model' });

    const failed = await send(secret, '/v1/chat/completions', chat('mid-fail-model'));
    expect(failed.status).toBe(502);
    const [failedRow] = await logged(`request_id=${failed.requestId}`, 1);
    expect(failedRow).toMatchObject({ status: 502, error_code: 'upstream_error', target: 'sim-fail-mid/mid-fail-model', stream: false });

    const cut = await send(secret, '/v1/chat/completions', chat('mid-fail-model', { stream: true }));
    expect(cut.status).toBe(200);
    const [cutRow] = await logged(`request_id=${cut.requestId}`, 1);
    expect(cutRow).toMatchObject({ status: 200, stream: true, error_code: 'upstream_error', target: 'sim-fail-mid/mid-fail-model' });
    expect(cutRow?.first_byte_ms).toEqual(expect.any(Number));
    expect(Number(cutRow?.output_tokens)).toBeGreaterThan(0);

    const poor = await harness.newAccount('0');
    const refused = await send(poor.secret, '/v1/chat/completions', chat('model-5.6'));
    expect(refused.status).toBe(403);
    const [refusedRow] = await logged(`request_id=${refused.requestId}`, 1);
    expect(refusedRow).toMatchObject({ status: 403, error_code: 'insufficient_user_quota', account_id: poor.accountId, target: null });

    const errors = await logged(`account=${accountId}`, 3);
    expect(errors.every((row) => row.error_code !== null)).toBe(true);
  });

  it('logs a request refused before routing too (bad key, unknown model, bad body), with the code the client saw', async () => {
    const { secret, accountId, keyId } = await harness.newAccount('5');
    const refused = [
      await send('sk-tg-made-up', '/v1/chat/completions', chat('model-5.6')),
      await send(secret, '/v1/chat/completions', chat('no-such-model')),
      await send(secret, '/v1/chat/completions', { messages: 'not a list' }),
    ];
    expect(refused.map((answer) => answer.status)).toEqual([401, 503, 400]);
    const [badKey, unknownModel, badBody] = await Promise.all(refused.map(async (answer) => (await logged(`request_id=${answer.requestId}`, 1))[0]));
    const clientCode = (text: string): unknown => (JSON.parse(text) as { error: { code: string; type: string } }).error.code || (JSON.parse(text) as { error: { type: string } }).error.type;
    // No key was known: no account or key; a made-up model is not stored.
    expect(badKey).toMatchObject({ status: 401, error_code: 'service_api_error', account_id: null, key_id: null, surface: 'chat-completions', model: null, target: null });
    expect(unknownModel).toMatchObject({ status: 503, error_code: 'model_not_found', account_id: accountId, key_id: keyId, model: null, target: null });
    expect(badBody).toMatchObject({ status: 400, error_code: clientCode(refused[2]!.text), account_id: accountId, model: null });
    expect(refused.map((answer) => clientCode(answer.text))).toEqual(['service_api_error', 'model_not_found', badBody?.error_code]);
    expect(await logged(`account=${accountId}`, 2)).toHaveLength(2);
  });

  it('filters by account (id or name), key, model, status, request id and time range', async () => {
    const first = await harness.newAccount('5');
    const second = await harness.newAccount('5');
    const before = new Date(Date.now() - 1_000).toISOString();
    const a = await send(first.secret, '/v1/chat/completions', chat('model-5.6'));
    const b = await send(first.secret, '/v1/chat/completions', chat('model-5.6-mini'));
    const c = await send(second.secret, '/v1/chat/completions', chat('mid-fail-model'));
    await logged(`request_id=${c.requestId}`, 1);
    const ids = async (query: string) => ((await call('GET', `/requests?${query}`, viewer)).body.data as Row[]).map((row) => row.request_id);
    const account = await harness.store.findAccount(first.accountId);
    await vi.waitFor(async () => expect(await ids(`account=${first.accountId}`)).toEqual([b.requestId, a.requestId]), { timeout: 5_000 });
    expect(await ids(`account=${encodeURIComponent(account?.name ?? '')}`)).toEqual([b.requestId, a.requestId]);
    expect(await ids(`key=${second.keyId}`)).toEqual([c.requestId]);
    expect(await ids(`account=${first.accountId}&model=model-5.6-mini`)).toEqual([b.requestId]);
    expect(await ids(`model=mid-fail-model&status=502&from=${encodeURIComponent(before)}`)).toContain(c.requestId);
    expect(await ids(`model=mid-fail-model&status=200&from=${encodeURIComponent(before)}`)).not.toContain(c.requestId);
    expect(await ids(`account=${second.accountId}&status=200`)).toEqual([]);
    expect(await ids(`request_id=${a.requestId}`)).toEqual([a.requestId]);
    expect(await ids(`account=${first.accountId}&to=${encodeURIComponent(before)}`)).toEqual([]);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(await ids(`account=${first.accountId}&from=${encodeURIComponent(before)}&to=${encodeURIComponent(future)}`)).toEqual([b.requestId, a.requestId]);
  });

  it('filters by endpoint (surface), in pages and in the CSV export', async () => {
    const { secret, accountId } = await harness.newAccount('5');
    const chatted = await send(secret, '/v1/chat/completions', chat('model-5.6'));
    const responded = await send(secret, '/v1/responses', { model: 'model-5.6', input: 'Hi' });
    const messaged = await send(secret, '/v1/messages', { model: 'model-5.6', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    expect([chatted.status, responded.status, messaged.status]).toEqual([200, 200, 200]);
    await logged(`account=${accountId}`, 3);
    const ids = async (query: string) => ((await call('GET', `/requests?account=${accountId}&${query}`, viewer)).body.data as Row[]).map((row) => [row.request_id, row.surface]);
    expect(await ids('surface=chat-completions')).toEqual([[chatted.requestId, 'chat-completions']]);
    expect(await ids('surface=responses')).toEqual([[responded.requestId, 'responses']]);
    expect(await ids('surface=anthropic-messages&status=200')).toEqual([[messaged.requestId, 'anthropic-messages']]);
    expect(await ids('surface=embeddings')).toEqual([]);
    const response = await fetch(`${harness.baseUrl}/admin/v1/requests?account=${accountId}&surface=anthropic-messages&format=csv`, { headers: { authorization: `Bearer ${viewer}` } });
    expect(response.status).toBe(200);
    expect(parseCsvRecords(await response.text()).records.map((record) => [record.request_id, record.surface])).toEqual([[messaged.requestId, 'anthropic-messages']]);
  });

  it('pages newest first by cursor, every row once', async () => {
    const { secret, accountId } = await harness.newAccount('5');
    const sent: string[] = [];
    for (let index = 0; index < 7; index += 1) sent.push((await send(secret, '/v1/chat/completions', chat('model-5.6-mini'))).requestId);
    await logged(`account=${accountId}`, 7);
    const { rows, pages } = await allPages(call, `/requests?account=${accountId}`, viewer, 3);
    expect(pages).toBe(3);
    expect(rows.map((row) => row.request_id)).toEqual([...sent].reverse());
    const times = rows.map((row) => Date.parse(String(row.at)));
    expect([...times].sort((left, right) => right - left)).toEqual(times);
  });

  it('exports CSV: every matching row (no paging), the columns the OpenAPI document names, values equal to the JSON', async () => {
    const { secret, accountId } = await harness.newAccount('5');
    for (const model of ['model-5.6', 'mid-fail-model', 'model-5.6-mini']) await send(secret, '/v1/chat/completions', chat(model));
    const json = await logged(`account=${accountId}`, 3);
    const response = await fetch(`${harness.baseUrl}/admin/v1/requests?account=${accountId}&format=csv&limit=1`, { headers: { authorization: `Bearer ${viewer}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="requests.csv"');
    const { header, records } = parseCsvRecords(await response.text());
    expect(header).toEqual(['at', 'request_id', 'account_id', 'account_name', 'key_id', 'key_name', 'surface', 'model', 'target', 'status', 'error_code', 'stream', 'latency_ms', 'first_byte_ms', 'input_tokens', 'cached_input_tokens', 'cache_write_input_tokens', 'output_tokens', 'reasoning_tokens', 'cost_usd']);
    expect(records).toHaveLength(3);
    for (const [index, record] of records.entries()) {
      const row = json[index] ?? {};
      for (const column of header) expect(record[column], column).toBe(row[column] === null ? '' : String(row[column]));
    }
    const openapi = (await (await fetch(`${harness.baseUrl}/admin/v1/openapi.json`, { headers: { authorization: `Bearer ${viewer}` } })).json()) as { paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: { description?: string } }> }> } }> };
    for (const path of ['/admin/v1/requests', '/admin/v1/usage']) expect(Object.keys(openapi.paths[path]?.get.responses['200']?.content ?? {})).toEqual(['application/json', 'text/csv']);
    expect(openapi.paths['/admin/v1/requests']?.get.responses['200']?.content['text/csv']?.schema.description).toBe(`Columns: ${header.join(', ')} (no bodies).`);
    const empty = await fetch(`${harness.baseUrl}/admin/v1/requests?account=${accountId}&model=nothing&format=csv`, { headers: { authorization: `Bearer ${viewer}` } });
    expect(parseCsvRecords(await empty.text()).records).toEqual([]);
  });

  it('keeps bodies, cut at max_bytes, only for a model with log_bodies', async () => {
    const { secret, accountId } = await harness.newAccount('5');
    const body = chat('logged-model', { messages: [{ role: 'user', content: 'x'.repeat(500) }] });
    const sent = await send(secret, '/v1/chat/completions', body);
    expect(sent.status).toBe(200);
    const [row] = await logged(`request_id=${sent.requestId}`, 1);
    expect(row?.request_body).toBe(JSON.stringify(body).slice(0, 64));
    expect(row?.response_body).toBe(sent.text.slice(0, 64));
    await send(secret, '/v1/chat/completions', chat('model-5.6'));
    const rows = await logged(`account=${accountId}`, 2);
    expect(rows.find((entry) => entry.model === 'model-5.6')).toMatchObject({ request_body: null, response_body: null });
    // A streamed request keeps its request body; its answer (a stream) is not kept.
    const streamed = chat('logged-model', { stream: true });
    const sentStream = await send(secret, '/v1/chat/completions', streamed);
    const [streamRow] = await logged(`request_id=${sentStream.requestId}`, 1);
    expect(streamRow).toMatchObject({ stream: true, request_body: JSON.stringify(streamed).slice(0, 64), response_body: null });
  });

  it('is read by every admin role and refused without an admin token', async () => {
    const operator = (await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR)).secret;
    const owner = (await createAdminToken(harness.store, { role: 'owner' }, CLI_ACTOR)).secret;
    for (const token of [viewer, operator, owner]) {
      expect((await call('GET', '/requests?limit=1', token)).status).toBe(200);
      expect((await call('GET', '/usage', token)).status).toBe(200);
    }
    const { secret } = await harness.newAccount('1');
    for (const token of [null, 'tg-admin-made-up', secret]) {
      for (const path of ['/requests', '/usage', '/requests?format=csv', '/usage?format=csv']) {
        const answer = await call('GET', path, token);
        expect(answer.status, `${path} ${String(token)}`).toBe(401);
        expect((answer.body.error as Row).message).toBe('Invalid token.');
      }
    }
  });

  it('refuses bad queries with 400 naming what is wrong, and an unknown account with 404', async () => {
    const bad: Array<[string, RegExp]> = [
      ['/requests?status=abc', /status/],
      ['/requests?status=99', /status/],
      ['/requests?from=yesterday', /from must be an ISO 8601 date/],
      ['/requests?to=2025-02-30', /to must be an ISO 8601 date/],
      ['/requests?from=2026-02-01&to=2026-01-01', /from must not be after to/],
      ['/requests?cursor=junk', /Invalid cursor/],
      ['/requests?limit=0', /limit/],
      ['/requests?format=xml', /format/],
      ['/requests?surface=completions', /surface/],
      ['/usage?by=week', /by/],
      ['/usage?from=2026-13-01', /from must be an ISO 8601 date/],
      ['/usage?format=pdf', /format/],
    ];
    for (const [path, message] of bad) {
      const answer = await call('GET', path, viewer);
      expect(answer.status, path).toBe(400);
      expect((answer.body.error as Row).message, path).toMatch(message);
      expect(answer.requestId).toMatch(/^req_/);
    }
    for (const path of ['/requests?account=nobody', '/usage?account=nobody', '/requests?account=nobody&format=csv']) {
      const answer = await call('GET', path, viewer);
      expect(answer.status, path).toBe(404);
      expect((answer.body.error as Row).message).toBe('no account with id or name "nobody"');
    }
  });
});

describe('request log shutdown and switch', () => {
  it('writes the queued rows when the gateway closes (no waiting for the batch delay)', async () => {
    const harness = await startHarness({ requestLog: { writer: { flushDelayMs: 3_600_000 } } });
    try {
      const { secret, accountId } = await harness.newAccount('5');
      const response = await harness.post('/v1/chat/completions', chat('model-5.6'), secret);
      await response.text();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await harness.store.listRequestLog({ accountId }, { limit: 10 })).rows).toEqual([]);
      expect(harness.gateway.requestLog?.writer.queued).toBe(1);
      await harness.gateway.close();
      const rows = (await harness.store.listRequestLog({ accountId }, { limit: 10 })).rows;
      expect(rows.map((row) => row.requestId)).toEqual([response.headers.get('x-request-id')]);
    } finally {
      await harness.close();
    }
  });

  it('records nothing with log.enabled: false', async () => {
    const harness = await startHarness({ catalog: catalogWithLoggedBodies({ log: { enabled: false } }) });
    try {
      expect(harness.gateway.requestLog).toBeUndefined();
      const { secret, accountId } = await harness.newAccount('5');
      await (await harness.post('/v1/chat/completions', chat('logged-model'), secret)).text();
      await harness.gateway.close();
      expect((await harness.store.listRequestLog({ accountId }, { limit: 10 })).rows).toEqual([]);
      // Usage still comes from the ledger.
      expect((await harness.store.usageBy('model', { accountId }))[0]).toMatchObject({ group: 'logged-model', requests: 1 });
    } finally {
      await harness.close();
    }
  });
});
