/**
 * Testing one target from the admin API, end to end: a real gateway on loopback and three real
 * OpenAI-speaking upstream doubles behind one model's three targets (one healthy, one answering
 * 500 with a message that echoes the secret and its own address, one that never answers). Each
 * test goes through exactly the target asked for, bills nobody, leaves target health alone, is
 * refused to viewers and is audited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient, type AdminCall } from '../support/admin-client.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble as ChatDouble } from '../support/openai-upstream.js';
import { json, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';

const SECRET = 'sk-upstream-secret-9f8e7d6c5b4a';

describe('POST /admin/v1/catalog/models/{model}/targets/{index}/test', () => {
  let harness: Harness;
  let call: AdminCall;
  let healthy: ChatDouble;
  let failing: UpstreamDouble;
  let hanging: UpstreamDouble;
  const tokens = { operator: '', viewer: '' };
  let operatorId = '';

  beforeAll(async () => {
    healthy = await startOpenAIUpstream({ chunks: 3, chunkDelayMs: 30 });
    failing = await startUpstreamDouble(() => undefined);
    failing.answer(json(500, JSON.stringify({ error: { message: `engine overheated (key ${SECRET}, host ${failing.baseUrl})`, type: 'server_error' } })));
    hanging = await startUpstreamDouble(() => new Promise<void>(() => undefined));
    const provider = (name: string, baseUrl: string) => ({ name, type: 'openai', base_url: baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts: { first_byte_ms: 400, idle_ms: 400 } });
    harness = await startHarness({
      env: { TEST_UPSTREAM_KEY: SECRET },
      catalog: {
        providers: [provider('up-ok', healthy.baseUrl), provider('up-500', failing.baseUrl), provider('up-hang', hanging.baseUrl)],
        models: [
          {
            id: 'probe-model',
            prices: { input: '1', cached_input: '0.5', output: '4' },
            max_output_tokens: 4096,
            targets: [
              { provider: 'up-hang', model: 'm-hang', priority: 2 },
              { provider: 'up-ok', model: 'm-ok', priority: 0 },
              { provider: 'up-500', model: 'm-500', priority: 1 },
            ],
          },
        ],
        rate_limits: { requests: 10_000, window_seconds: 60 },
      },
    });
    call = adminClient(harness.baseUrl);
    for (const role of ['operator', 'viewer'] as const) {
      const created = await createAdminToken(harness.store, { role, name: `${role} of the target tests` }, CLI_ACTOR);
      tokens[role] = created.secret;
      if (role === 'operator') operatorId = created.token.id;
    }
  });

  afterAll(async () => {
    await harness.close();
    await Promise.all([healthy.close(), failing.close(), hanging.close()]);
  });

  const test = (index: number | string, token = tokens.operator, model = 'probe-model') => call('POST', `/catalog/models/${encodeURIComponent(model)}/targets/${index}/test`, token);

  it('lists the targets in priority order, the order a test index counts in', async () => {
    const catalog = await call('GET', '/catalog', tokens.viewer);
    const model = (catalog.body.models as Array<{ id: string; targets: Array<{ target: string }> }>).find((entry) => entry.id === 'probe-model');
    expect(model?.targets.map((entry) => entry.target)).toEqual(['up-ok/m-ok', 'up-500/m-500', 'up-hang/m-hang']);
  });

  it('a healthy target: ok, with its latency, first-token time, status and reported usage', async () => {
    const before = healthy.requests.length;
    const answer = await test(0);
    expect(answer.status).toBe(200);
    const body = answer.body as Record<string, unknown> & { latency_ms: number; first_token_ms: number };
    expect(body).toMatchObject({ model: 'probe-model', index: 0, target: 'up-ok/m-ok', status: 'ok', upstream_status: 200, error: null, text: 'word word word ' });
    expect(body.usage).toEqual({ input_tokens: 11, cached_input_tokens: 3, output_tokens: 3, reasoning_tokens: 0 });
    expect(body.latency_ms).toBeGreaterThan(0);
    expect(body.first_token_ms).toBeGreaterThan(0);
    expect(body.first_token_ms).toBeLessThanOrEqual(body.latency_ms);
    // Three chunks 30 ms apart: the answer's end comes well after its first word.
    expect(body.latency_ms - body.first_token_ms).toBeGreaterThanOrEqual(40);
    // Exactly one call, to this target, with the small request.
    expect(healthy.requests.length).toBe(before + 1);
    const sent = healthy.requests.at(-1)!.body;
    expect(sent.model).toBe('m-ok');
    expect(sent.messages).toEqual([{ role: 'user', content: 'Say OK' }]);
    expect(sent.max_completion_tokens ?? sent.max_tokens).toBe(16);
  });

  it('a failing target: failed, the upstream 500 and its message, with neither secret nor address', async () => {
    const healthyCalls = healthy.requests.length;
    const answer = await test(1);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ target: 'up-500/m-500', status: 'failed', upstream_status: 500, first_token_ms: null, usage: null, error: { kind: 'status' } });
    const message = (answer.body.error as { message: string }).message;
    expect(message).toContain('engine overheated');
    expect(message).toContain('[redacted]');
    const raw = JSON.stringify(answer.body);
    expect(raw).not.toContain(SECRET);
    expect(raw).not.toContain(new URL(failing.baseUrl).host);
    // No failover: the healthy target was not called instead.
    expect(healthy.requests.length).toBe(healthyCalls);
  });

  it('a hanging target: failed by its own first-byte timeout, reported as a timeout', async () => {
    const started = Date.now();
    const answer = await test(2);
    const took = Date.now() - started;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ target: 'up-hang/m-hang', status: 'failed', upstream_status: null, error: { kind: 'timeout' } });
    expect(answer.body.latency_ms as number).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(5_000);
    expect(hanging.requests.length).toBe(1);
  });

  it('bills nobody, writes no request-log row and leaves target health as it was', async () => {
    const account = await harness.newAccount('1');
    await test(1);
    await test(1);
    await test(1);
    expect(await harness.store.countOpenHolds()).toBe(0);
    expect((await harness.store.listLedger(account.accountId)).map((entry) => entry.kind)).toEqual(['credit']);
    expect(harness.gateway.requestLog?.writer.queued).toBe(0);
    const log = await harness.store.listRequestLog({}, { limit: 50 });
    expect(log.rows).toEqual([]);
    // Three failures in a row would cool a routed target down (threshold 3): tests do not count.
    const catalog = await call('GET', '/catalog', tokens.viewer);
    const targets = catalog.body.targets as Array<{ target: string; status: string; consecutive_failures: number }>;
    expect(targets.find((target) => target.target === 'up-500/m-500')).toMatchObject({ status: 'healthy', consecutive_failures: 0 });
    expect(targets.find((target) => target.target === 'up-hang/m-hang')).toMatchObject({ status: 'healthy', consecutive_failures: 0 });
  });

  it('is audited: who tested which target, and the result', async () => {
    const audit = await call('GET', '/audit?target_type=target&limit=200', tokens.viewer);
    expect(audit.status).toBe(200);
    const rows = audit.body.data as Array<{ action: string; target_id: string; admin_token_id: string | null; after: Record<string, unknown> }>;
    expect(rows.every((row) => row.action === 'target.test' && row.admin_token_id === operatorId)).toBe(true);
    const ok = rows.find((row) => row.target_id === 'up-ok/m-ok');
    expect(ok?.after).toMatchObject({ model: 'probe-model', index: 0, status: 'ok', upstream_status: 200, error: null });
    const failed = rows.find((row) => row.target_id === 'up-500/m-500');
    expect(failed?.after).toMatchObject({ status: 'failed', upstream_status: 500, error: { kind: 'status' } });
    expect(JSON.stringify(rows)).not.toContain(SECRET);
  });

  it('is refused to a viewer (403) and to no token (401), before any upstream call', async () => {
    const calls = healthy.requests.length;
    const viewer = await test(0, tokens.viewer);
    expect(viewer.status).toBe(403);
    expect((viewer.body.error as { message: string }).message).toContain('operator role');
    const anonymous = await call('POST', '/catalog/models/probe-model/targets/0/test', null);
    expect(anonymous.status).toBe(401);
    expect(healthy.requests.length).toBe(calls);
    const audit = await call('GET', '/audit?target_type=target&limit=200', tokens.viewer);
    expect((audit.body.data as unknown[]).length).toBe(6);
  });

  it('refuses an unknown model, a target index out of range and an index that is no number', async () => {
    const unknown = await test(0, tokens.operator, 'no-such-model');
    expect(unknown.status).toBe(404);
    expect((unknown.body.error as { message: string }).message).toContain('no-such-model');
    const outOfRange = await test(3);
    expect(outOfRange.status).toBe(404);
    expect((outOfRange.body.error as { param?: string }).param).toBe('index');
    const notANumber = await test('first');
    expect(notANumber.status).toBe(400);
    const negative = await test(-1);
    expect(negative.status).toBe(400);
  });
});
