/**
 * Outages in sight, end to end on SQLite and PostgreSQL: a real upstream double (OpenAI's wire
 * format) fails until the test lets it recover. `/admin/v1/health/requests` counts its errors per
 * target and per model, and its time-to-first-byte and duration figures are the ones the logged
 * rows give (nearest rank); `/admin/v1/health/rotations` shows the target taken out and back, with
 * times and the reason. Also exact percentiles over seeded rows, the range rules, and who may read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { fixture } from '../../src/providers/openai/__fixtures__/fixtures.js';
import type { RequestLogEntry } from '../../src/store/store.js';
import { adminClient, allPages, type AdminCall } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { json, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';

const TARGET = 'upstream/upstream-model';
const COOLDOWN_MS = 300;

type Row = Record<string, unknown>;

/** Polls `get` every 20 ms until it gives a value; throws after 15 s. */
async function eventually<T>(what: string, get: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
type Figures = { p50: number; p95: number; max: number };

/** The nearest-rank percentiles and maximum of `values`, as the route computes them. */
function figuresOf(values: readonly number[]): Figures {
  const sorted = [...values].sort((left, right) => left - right);
  const rank = (percent: number) => sorted[Math.ceil((sorted.length * percent) / 100) - 1]!;
  return { p50: rank(50), p95: rank(95), max: sorted[sorted.length - 1]! };
}

describe.each(engines)('outages in sight on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let call: AdminCall;
  let viewer: string;
  let secret: string;
  let started: number;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(json(500, fixture('error-500.json')));
    harness = await startHarness({
      engine,
      catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl }),
      env: { TEST_UPSTREAM_KEY: 'sk-upstream-test' },
      router: { failureThreshold: 2, cooldownMs: COOLDOWN_MS },
      requestLog: { writer: { flushDelayMs: 10 } },
    });
    call = adminClient(harness.baseUrl);
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    secret = (await harness.newAccount('10')).secret;
    started = Date.now();
  });

  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  const chat = (model: string, stream = false) =>
    harness.post('/v1/chat/completions', { model, stream, messages: [{ role: 'user', content: 'hi' }] }, secret);

  it('counts a failing target\'s errors per target and model, its figures match the log, and its rotation shows out and back', async () => {
    // Two failures take the only target out; a request while it cools is refused without trying it.
    for (let index = 0; index < 2; index++) expect((await chat('relay-model')).status).toBe(503);
    const out = await eventually('the rotation to be written', async () => ((await call('GET', '/health/rotations', viewer)).body.data as Row[])[0]);
    expect(out).toMatchObject({ target: TARGET, scope: 'target', provider: 'upstream', back_at: null, out_ms: null, reason: 'status 500' });
    expect(out.instance).toMatch(/:\d+$/);
    expect(Date.parse(String(out.out_at))).toBeGreaterThanOrEqual(started);
    expect(Date.parse(String(out.cooling_until))).toBeGreaterThan(Date.parse(String(out.out_at)));

    upstream.answer(json(200, fixture('chat-completion.json')));
    await eventually('the target to serve again', async () => ((await chat('relay-model')).status === 200 ? true : undefined));
    for (let index = 0; index < 3; index++) expect((await chat('model-5.6', true)).status).toBe(200);
    const back = await eventually('the rotation to be closed', async () => {
      const rows = (await call('GET', '/health/rotations', viewer)).body.data as Row[];
      return rows[0]?.back_at !== null ? rows[0] : undefined;
    });
    expect(back).toMatchObject({ id: out.id, target: TARGET, out_at: out.out_at, reason: 'status 500' });
    expect(Date.parse(String(back.back_at))).toBeGreaterThanOrEqual(Date.parse(String(out.out_at)) + COOLDOWN_MS);
    expect(back.out_ms).toBe(Date.parse(String(back.back_at)) - Date.parse(String(out.out_at)));
    expect(Date.parse(String(back.back_at))).toBeLessThanOrEqual(Date.now());

    // Every request is logged before the figures are read.
    const logged = await eventually('every request to be logged', async () => {
      const { rows } = await allPages(call, `/requests?from=${new Date(started).toISOString()}`, viewer, 200);
      return rows.filter((row) => row.model === 'model-5.6').length === 3 && rows.some((row) => row.model === 'relay-model' && row.status === 200) ? rows : undefined;
    });
    const answer = await call('GET', `/health/requests?by=target&from=${new Date(started - 3_600_000).toISOString()}`, viewer);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ bucket: 'hour', by: 'target' });
    const rows = answer.body.rows as Row[];
    for (const target of [TARGET, 'sim/model-5.6']) {
      const mine = logged.filter((row) => row.target === target);
      const reported = rows.filter((row) => row.group === target);
      // The test runs inside one or two hours: sum over them, and check each hour's figures against its rows.
      expect(reported.reduce((sum, row) => sum + Number(row.requests), 0)).toBe(mine.length);
      expect(reported.reduce((sum, row) => sum + Number(row.errors), 0)).toBe(mine.filter((row) => row.error_code !== null).length);
      for (const row of reported) {
        const start = Date.parse(String(row.bucket_start));
        const inHour = mine.filter((entry) => Date.parse(String(entry.at)) >= start && Date.parse(String(entry.at)) < start + 3_600_000);
        expect(row.requests).toBe(inHour.length);
        expect(row.duration_ms).toEqual(figuresOf(inHour.map((entry) => Number(entry.latency_ms))));
        const firstBytes = inHour.filter((entry) => entry.first_byte_ms !== null).map((entry) => Number(entry.first_byte_ms));
        expect(row.first_byte_ms).toEqual(firstBytes.length === 0 ? null : figuresOf(firstBytes));
        expect(row.error_rate).toBe(Math.round((Number(row.errors) / inHour.length) * 10_000) / 10_000);
      }
    }
    const failing = (answer.body.groups as Row[]).find((group) => group.group === TARGET)!;
    expect(failing.errors).toBeGreaterThanOrEqual(2);
    expect(failing.error_rate).toBeGreaterThan(0);
    expect((answer.body.groups as Row[]).find((group) => group.group === 'sim/model-5.6')).toMatchObject({ requests: 3, errors: 0, error_rate: 0 });

    // By model, the refusal while the target cooled (no target tried) counts too.
    const byModel = await call('GET', `/health/requests?by=model&bucket=day&from=${new Date(started - 86_400_000).toISOString()}`, viewer);
    expect(byModel.status).toBe(200);
    const relay = (byModel.body.groups as Row[]).find((group) => group.group === 'relay-model')!;
    expect(relay.requests).toBe(logged.filter((row) => row.model === 'relay-model').length);
    expect(relay.errors).toBe(logged.filter((row) => row.model === 'relay-model' && row.error_code !== null).length);
  });

  it('gives exact nearest-rank percentiles per hour and group over seeded rows', async () => {
    const hour = Date.UTC(2026, 0, 5, 10);
    const entry = (index: number, overrides: Partial<RequestLogEntry>): RequestLogEntry => ({
      at: new Date(hour + index * 1_000),
      requestId: `req_seed_${index}_${overrides.target ?? 'x'}`,
      accountId: 'acct_seed',
      keyId: 'key_seed',
      surface: 'chat-completions',
      model: 'seed-model',
      target: 'seed/a',
      status: 200,
      errorCode: null,
      stream: true,
      latencyMs: 0,
      firstByteMs: null,
      inputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      costNanos: 0n,
      requestBody: null,
      responseBody: null,
      ...overrides,
    });
    // seed/a: durations 1..100 ms, first bytes on the even ones only (2..100), every 10th an error.
    const a = Array.from({ length: 100 }, (_, index) =>
      entry(index, { latencyMs: 100 - index, firstByteMs: (100 - index) % 2 === 0 ? 100 - index : null, ...(index % 10 === 0 ? { status: 502, errorCode: 'upstream_error' } : {}) }),
    );
    // seed/b in the next hour: 3 rows, none sent a byte.
    const b = [5, 7, 9].map((latencyMs, index) => entry(3_600 + index, { target: 'seed/b', latencyMs }));
    // Outside the range and a row with no target: not counted.
    const outside = [entry(-1, { latencyMs: 9_999 }), entry(7_300, { latencyMs: 9_999 }), entry(5, { target: null, latencyMs: 9_999 })];
    await harness.store.appendRequestLog([...a, ...b, ...outside]);

    const range = `from=${new Date(hour).toISOString()}&to=${new Date(hour + 2 * 3_600_000).toISOString()}`;
    const answer = await call('GET', `/health/requests?by=target&${range}`, viewer);
    expect(answer.status).toBe(200);
    expect(answer.body.rows).toEqual([
      { bucket_start: new Date(hour).toISOString(), group: 'seed/a', requests: 100, errors: 10, error_rate: 0.1, first_byte_ms: { p50: 50, p95: 96, max: 100 }, duration_ms: { p50: 50, p95: 95, max: 100 } },
      { bucket_start: new Date(hour + 3_600_000).toISOString(), group: 'seed/b', requests: 3, errors: 0, error_rate: 0, first_byte_ms: null, duration_ms: { p50: 7, p95: 9, max: 9 } },
    ]);
    expect(answer.body.groups).toEqual([
      { group: 'seed/a', requests: 100, errors: 10, error_rate: 0.1 },
      { group: 'seed/b', requests: 3, errors: 0, error_rate: 0 },
    ]);
    const daily = await call('GET', `/health/requests?by=model&bucket=day&${range}`, viewer);
    expect(daily.body.rows).toEqual([
      // By model the row with no target counts; the day bucket holds both hours.
      expect.objectContaining({ bucket_start: new Date(Date.UTC(2026, 0, 5)).toISOString(), group: 'seed-model', requests: 104, errors: 10, duration_ms: { p50: 49, p95: 96, max: 9_999 } }),
    ]);
  });

  it('refuses bad ranges and groupings, and readers without a token', async () => {
    const refused = async (query: string, message: RegExp) => {
      const answer = await call('GET', `/health/requests?${query}`, viewer);
      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.body)).toMatch(message);
    };
    await refused('from=2026-02-01&to=2026-01-01', /from must not be after to/);
    await refused('from=2025-01-01&to=2026-01-01&bucket=hour', /at most 1000/);
    await refused('by=account', /by/);
    await refused('bucket=week', /bucket/);
    await refused('from=yesterday', /from/);
    expect((await call('GET', '/health/rotations?limit=0', viewer)).status).toBe(400);
    expect((await call('GET', '/health/rotations?from=2026-02-01&to=2026-01-01', viewer)).status).toBe(400);
    for (const path of ['/health/requests', '/health/rotations']) {
      expect((await call('GET', path, null)).status).toBe(401);
      expect((await call('GET', path, 'tg-admin-madeup')).status).toBe(401);
    }
    // A year by day is allowed.
    expect((await call('GET', '/health/requests?from=2025-01-01&to=2026-01-01&bucket=day', viewer)).status).toBe(200);
  });
});
