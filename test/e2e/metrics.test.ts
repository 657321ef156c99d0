/**
 * `/metrics` on a real gateway: request durations and time to first byte by surface, model and
 * status; tokens and cost by model, equal to what the ledger charged; open streams and open holds
 * while a stream runs; upstream failures by target and kind; bounded labels; and the option that
 * keeps `/metrics` for admin tokens.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken, setAdminTokenDisabled } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';
import { sampleSum, samplesOf } from '../support/prometheus.js';

const scrape = async (harness: Harness, headers: Record<string, string> = {}) => {
  const response = await fetch(`${harness.baseUrl}/metrics`, { headers });
  expect(response.status).toBe(200);
  return response.text();
};

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('/metrics', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => harness?.close());

  it('counts routed answers by surface, model and status, and tokens and cost as the ledger charged them', async () => {
    const { accountId, secret } = await harness.newAccount('5');
    const chat = { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'Count my tokens, please.' }], max_tokens: 40 };
    for (const stream of [false, true]) {
      const response = await harness.post('/v1/chat/completions', { ...chat, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) }, secret);
      expect(response.status).toBe(200);
      await response.text();
    }
    const responses = await harness.post('/v1/responses', { model: 'model-5.6-mini', input: 'Hello there', max_output_tokens: 40 }, secret);
    expect(responses.status).toBe(200);
    await responses.text();

    const labels = { surface: 'chat', model: 'model-5.6-mini', status: '200' };
    await waitFor(async () => sampleSum(await scrape(harness), 'tollgate_request_duration_seconds_count', labels) === 2);
    const text = await scrape(harness);
    expect(sampleSum(text, 'tollgate_request_duration_seconds_count', { surface: 'responses', model: 'model-5.6-mini', status: '200' })).toBe(1);
    expect(sampleSum(text, 'tollgate_time_to_first_byte_seconds_count', labels)).toBe(2);
    // Every observation falls in the +Inf bucket; the bucket counts are cumulative.
    expect(sampleSum(text, 'tollgate_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(2);
    expect(sampleSum(text, 'tollgate_request_duration_seconds_sum', labels)).toBeGreaterThan(0);

    const charges = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toHaveLength(3);
    const billed = (field: 'inputTokens' | 'outputTokens') => charges.reduce((sum, charge) => sum + charge[field], 0);
    expect(sampleSum(text, 'tollgate_tokens_total', { model: 'model-5.6-mini', kind: 'input' })).toBe(billed('inputTokens'));
    expect(sampleSum(text, 'tollgate_tokens_total', { model: 'model-5.6-mini', kind: 'output' })).toBe(billed('outputTokens'));
    const cost = charges.reduce((sum, charge) => sum + charge.amountNanos, 0n);
    expect(cost).toBeGreaterThan(0n);
    expect(sampleSum(text, 'tollgate_cost_nanos_total', { model: 'model-5.6-mini' })).toBe(Number(cost));
  });

  it('a request refused before routing is no routed answer, and a made-up model never becomes a label', async () => {
    const { secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/chat/completions', { model: 'made-up-model-xyz', messages: [{ role: 'user', content: 'x' }] }, secret);
    expect(response.status).toBe(503);
    await response.text();
    const text = await scrape(harness);
    expect(text).not.toContain('made-up-model-xyz');
    expect(sampleSum(text, 'tollgate_answers_total', { route: '/v1/chat/completions', code: 'model_unavailable' })).toBe(1);
  });

  it('shows a running stream in open streams and open holds, and neither once it ended', async () => {
    const { secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/chat/completions', { model: 'slow-model', messages: [{ role: 'user', content: 'stream slowly' }], stream: true, max_tokens: 30 }, secret);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    const during = await scrape(harness);
    expect(sampleSum(during, 'tollgate_open_streams')).toBe(1);
    expect(sampleSum(during, 'tollgate_holds_open')).toBe(1);
    while (!(await reader.read()).done);
    await waitFor(async () => sampleSum(await scrape(harness), 'tollgate_open_streams') === 0);
    const after = await scrape(harness);
    expect(sampleSum(after, 'tollgate_holds_open')).toBe(0);
    expect(sampleSum(after, 'tollgate_request_duration_seconds_count', { surface: 'chat', model: 'slow-model', status: '200' })).toBe(1);
  });

  it('a client that cuts a stream closes it in open streams too', async () => {
    const { secret, accountId } = await harness.newAccount('1');
    const abort = new AbortController();
    const response = await fetch(`${harness.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow-model', messages: [{ role: 'user', content: 'stream slowly' }], stream: true, max_tokens: 200 }),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    // Until some output has arrived, so that the cut stream is billed for something.
    for (let text = ''; !/"content":"[^"]/.test(text); ) text += new TextDecoder().decode((await reader.read()).value);
    const during = await scrape(harness);
    expect(sampleSum(during, 'tollgate_open_streams')).toBe(1);
    const labels = { surface: 'chat', model: 'slow-model', status: '200' };
    const durationsBefore = sampleSum(during, 'tollgate_request_duration_seconds_count', labels);
    abort.abort();
    await waitFor(async () => {
      const text = await scrape(harness);
      const recorded = sampleSum(text, 'tollgate_request_duration_seconds_count', labels) === durationsBefore + 1;
      return recorded && sampleSum(text, 'tollgate_open_streams') === 0 && sampleSum(text, 'tollgate_holds_open') === 0;
    });
    // Cut, it still counts as an answer that lasted until the cut, with the output it was billed for.
    const after = await scrape(harness);
    expect(sampleSum(after, 'tollgate_request_duration_seconds_count', labels)).toBe(durationsBefore + 1);
    const [charge] = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    const outputCounted = sampleSum(after, 'tollgate_tokens_total', { model: 'slow-model', kind: 'output' }) - sampleSum(during, 'tollgate_tokens_total', { model: 'slow-model', kind: 'output' });
    expect(charge?.outputTokens).toBeGreaterThan(0);
    expect(outputCounted).toBe(charge?.outputTokens);
    expect(sampleSum(after, 'tollgate_cost_nanos_total', { model: 'slow-model' }) - sampleSum(during, 'tollgate_cost_nanos_total', { model: 'slow-model' })).toBe(Number(charge?.amountNanos ?? 0n));
  });

  it('counts upstream failures by target and kind, the failover still answering', async () => {
    const { secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/chat/completions', { model: 'failover-model', messages: [{ role: 'user', content: 'x' }], max_tokens: 20 }, secret);
    expect(response.status).toBe(200);
    await response.text();
    const text = await scrape(harness);
    expect(samplesOf(text, 'tollgate_upstream_failures_total')).toEqual([
      { name: 'tollgate_upstream_failures_total', labels: { target: 'sim-fail-before/failover-model', kind: 'status' }, value: 1 },
    ]);
  });

  it('counts an upstream that fails mid-stream as a mid_stream failure of its target', async () => {
    const { secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/chat/completions', { model: 'mid-fail-model', messages: [{ role: 'user', content: 'x' }], stream: true, max_tokens: 50 }, secret);
    expect(response.status).toBe(200);
    await response.text();
    const labels = { target: 'sim-fail-mid/mid-fail-model', kind: 'mid_stream' };
    await waitFor(async () => sampleSum(await scrape(harness), 'tollgate_upstream_failures_total', labels) === 1);
    expect(sampleSum(await scrape(harness), 'tollgate_request_duration_seconds_count', { surface: 'chat', model: 'mid-fail-model', status: '200' })).toBe(1);
  });

  it('is open to anyone by default', async () => {
    expect((await fetch(`${harness.baseUrl}/metrics`)).status).toBe(200);
  });
});

describe('/metrics with metrics.require_admin_token', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ catalog: { ...(testCatalog() as Record<string, unknown>), metrics: { require_admin_token: true } } });
  });
  afterAll(async () => harness?.close());

  it('refuses no token, a made-up one and an API key with the 401 of the error format', async () => {
    const { secret } = await harness.newAccount('1');
    for (const headers of [{}, { authorization: 'Bearer tg-admin-made-up-token' }, { authorization: `Bearer ${secret}` }] as Array<Record<string, string>>) {
      const response = await fetch(`${harness.baseUrl}/metrics`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).toBe('Invalid token.');
    }
  });

  it('answers an admin token of any role, viewer included, and refuses a disabled one', async () => {
    for (const role of ['viewer', 'operator', 'owner']) {
      const { secret } = await createAdminToken(harness.store, { role }, CLI_ACTOR);
      const text = await scrape(harness, { authorization: `Bearer ${secret}` });
      expect(text).toContain('tollgate_answers_total');
    }
    const { token, secret } = await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR);
    await setAdminTokenDisabled(harness.store, token.id, true, CLI_ACTOR);
    expect((await fetch(`${harness.baseUrl}/metrics`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
  });

  it('the README\'s curl line works as printed (the address swapped for the test server\'s)', async () => {
    const { secret } = await harness.newAccount('1');
    const answer = await harness.post('/v1/chat/completions', { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'x' }], max_tokens: 5 }, secret);
    expect(answer.status).toBe(200);
    await answer.text();
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Metrics and traces'));
    const curl = (/```sh\n(curl [^\n]*)\n```/.exec(section)?.[1] ?? '').replaceAll('http://127.0.0.1:8080', harness.baseUrl);
    expect(curl).toContain(harness.baseUrl);
    const { secret: token } = await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR);
    const { stdout } = await promisify(execFile)('sh', ['-c', curl], { env: { ...process.env, ADMIN_TOKEN: token } });
    const lines = stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/^tollgate_tokens_total\{model="model-5.6-mini",kind="[a-z_]+"\} \d+$/);
  });
});
