/**
 * Pools of upstream keys end to end (docs/architecture.md, "Pools of upstream keys"): the real
 * gateway, the official openai client, and an OpenAI-compatible double on loopback that answers by
 * key. With three keys, of which one is refused (401) and one is limited once (429, Retry-After:
 * 2), 100 requests all succeed and are billed exactly usage × prices; the webhook gets
 * `upstream_key.refused` once, naming the key and not its secret; the limited key is used again
 * once its Retry-After is over; `/metrics` and the admin catalog show each key's state by name; the
 * logs hold no key. With every key refused the client gets the spec's 503 at once.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { providerSchema } from '../../src/config/schema.js';
import { adminClient } from '../support/admin-client.js';
import { settledCharges } from '../support/charges.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { KEYED_USAGE, startKeyedUpstream, type KeyedUpstream } from '../support/keyed-upstream.js';
import { samplesOf } from '../support/prometheus.js';
import { startWebhookReceiver, until, verifyWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';

const KEY_OK = 'sk-pool-primary-0a1b2c3d4e5f';
const KEY_REFUSED = 'sk-pool-revoked-9f8e7d6c5b4a';
const KEY_LIMITED = 'sk-pool-limited-1122334455aa';
const SECRETS = [KEY_OK, KEY_REFUSED, KEY_LIMITED];
const WEBHOOK_SECRET = 'whsec-pools-7777';
/** Per token, in nano-USD: the catalog's 1 USD (input) and 4 USD (output) per million tokens. */
const EXPECTED_CHARGE = BigInt(KEYED_USAGE.prompt_tokens) * 1_000n + BigInt(KEYED_USAGE.completion_tokens) * 4_000n;

function poolCatalog(baseUrl: string, keys: unknown[], webhookUrl?: string): Record<string, unknown> {
  return {
    providers: [{ name: 'pool', type: 'openai', base_url: baseUrl, api: 'chat', api_keys: keys, timeouts: { first_byte_ms: 2_000, idle_ms: 2_000 } }],
    models: [{ id: 'pool-model', prices: { input: '1', output: '4' }, max_output_tokens: 64, targets: [{ provider: 'pool', model: 'upstream-model' }] }],
    rate_limits: { requests: 10_000, window_seconds: 60 },
    ...(webhookUrl === undefined
      ? {}
      : { alerts: { webhooks: [{ url: webhookUrl, secret_env: 'POOL_WEBHOOK_SECRET', events: ['upstream_key.refused'] }], delivery: { poll_ms: 25, first_retry_ms: 50, max_retry_ms: 200 } } }),
  };
}

/** A pino logger whose lines the test reads. */
function capturedLogger(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

describe.each(engines)('a pool of upstream keys on %s', (engine) => {
  let harness: Harness;
  let upstream: KeyedUpstream;
  let receiver: WebhookReceiver;
  let folder: string;
  let logs: string[];

  beforeAll(async () => {
    // The limited key answers 429 once, then serves; the revoked one always refuses.
    upstream = await startKeyedUpstream((key, index) => {
      if (key === KEY_REFUSED) return { status: 401 };
      if (key === KEY_LIMITED && index === 0) return { status: 429, headers: { 'retry-after': '2' } };
      return { status: 200 };
    });
    receiver = await startWebhookReceiver();
    folder = mkdtempSync(join(tmpdir(), 'tollgate-pool-'));
    // One key read from a file, as a mounted secret would be.
    writeFileSync(join(folder, 'limited-key'), `${KEY_LIMITED}\n`);
    const keys = [
      { name: 'primary', env: 'POOL_KEY_PRIMARY' },
      { name: 'revoked', env: 'POOL_KEY_REVOKED' },
      { name: 'limited', file: join(folder, 'limited-key') },
    ];
    const captured = capturedLogger();
    logs = captured.lines;
    harness = await startHarness({
      engine,
      catalog: poolCatalog(upstream.baseUrl, keys, receiver.url),
      env: { POOL_KEY_PRIMARY: KEY_OK, POOL_KEY_REVOKED: KEY_REFUSED, POOL_WEBHOOK_SECRET: WEBHOOK_SECRET },
      logger: captured.logger,
    });
  });

  afterAll(async () => {
    await harness?.close();
    await Promise.all([upstream?.close(), receiver?.close()]);
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it('serves 100 requests through a refused key and a limited one, alerts once, and uses the limited key again after its Retry-After', async () => {
    const { accountId, secret } = await harness.newAccount('10');
    // No retries in the client: every answer it gets is the gateway's first.
    const client = harness.client(secret, { maxRetries: 0 });
    const ask = async (index: number): Promise<string> => {
      const messages = [{ role: 'user' as const, content: `question ${index}` }];
      if (index % 2 === 0) return (await client.chat.completions.create({ model: 'pool-model', messages })).choices[0]?.message.content ?? '';
      let text = '';
      for await (const chunk of await client.chat.completions.create({ model: 'pool-model', messages, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
      return text;
    };
    const answers: string[] = [];
    // The first ten one by one: the refused and the limited key are met before any other call is
    // under way with them. Then ten at a time.
    for (let index = 0; index < 10; index++) answers.push(await ask(index));
    for (let batch = 1; batch < 10; batch++) answers.push(...(await Promise.all(Array.from({ length: 10 }, (_, index) => ask(batch * 10 + index)))));
    expect(answers).toEqual(Array.from({ length: 100 }, () => 'pooled answer'));

    const limited = upstream.calls.filter((call) => call.key === KEY_LIMITED);
    const refusedAt = limited[0]!.at;
    expect(limited[0]?.status).toBe(429);
    // Cooling: not sent a single call within its Retry-After.
    expect(limited.filter((call) => call.at < refusedAt + 2_000)).toHaveLength(1);
    // Every successful answer came from a key that served; each refusal was retried on a sibling.
    expect(upstream.calls.filter((call) => call.status === 200)).toHaveLength(100);
    expect(upstream.calls.some((call) => call.key === KEY_REFUSED && call.status === 401)).toBe(true);

    // Past its Retry-After the limited key takes calls again, and serves them.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, refusedAt + 2_000 - Date.now())));
    for (let index = 0; index < 4; index++) expect(await ask(100 + index)).toBe('pooled answer');
    const back = upstream.calls.filter((call) => call.key === KEY_LIMITED && call.at >= refusedAt + 2_000);
    expect(back.length).toBeGreaterThan(0);
    expect(back.every((call) => call.status === 200)).toBe(true);

    // Billed once per answer, exactly the upstream's usage × the catalog's prices.
    const charges = await settledCharges(harness, accountId, '10');
    expect(charges).toHaveLength(104);
    expect(charges.every((charge) => charge.amountNanos === EXPECTED_CHARGE)).toBe(true);

    // One alert for the refused key, named, signed, without its secret.
    await until('upstream_key.refused', () => receiver.accepted().some((webhook) => webhook.body.type === 'upstream_key.refused'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const alerts = receiver.accepted().filter((webhook) => webhook.body.type === 'upstream_key.refused');
    expect(alerts).toHaveLength(1);
    expect(verifyWebhook(WEBHOOK_SECRET, alerts[0]!)).toBe(true);
    expect(alerts[0]!.body.data).toEqual({ provider: 'pool', key: 'revoked', status: 401, instance: expect.stringMatching(/:\d+$/) });
    for (const webhook of receiver.received) for (const key of SECRETS) expect(webhook.rawBody).not.toContain(key);
  });

  it('shows each key\'s state by name in /metrics and the admin catalog, never a secret', async () => {
    const metrics = await (await fetch(`${harness.baseUrl}/metrics`)).text();
    const state = (key: string, name: string) => samplesOf(metrics, 'tollgate_upstream_key_state', { provider: 'pool', key, state: name })[0]?.value;
    expect([state('primary', 'ok'), state('primary', 'cooling'), state('primary', 'refused')]).toEqual([1, 0, 0]);
    expect([state('revoked', 'ok'), state('revoked', 'refused')]).toEqual([0, 1]);
    expect(state('limited', 'ok')).toBe(1);
    const calls = (key: string) => samplesOf(metrics, 'tollgate_upstream_key_calls_total', { provider: 'pool', key })[0]?.value;
    expect(calls('primary')! + calls('revoked')! + calls('limited')!).toBe(upstream.calls.length);
    expect(calls('limited')).toBe(upstream.calls.filter((call) => call.key === KEY_LIMITED).length);
    expect(samplesOf(metrics, 'tollgate_upstream_key_events_total', { provider: 'pool', key: 'revoked', event: 'refused' })[0]?.value).toBe(1);
    expect(samplesOf(metrics, 'tollgate_upstream_key_events_total', { provider: 'pool', key: 'limited', event: 'cooling' })[0]?.value).toBe(1);

    const viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    const catalog = await adminClient(harness.baseUrl)('GET', '/catalog', viewer);
    expect(catalog.status).toBe(200);
    expect(catalog.body.upstream_keys).toEqual([
      { provider: 'pool', key: 'primary', state: 'ok', cooling_until: null, calls: calls('primary') },
      { provider: 'pool', key: 'revoked', state: 'refused', cooling_until: null, calls: calls('revoked') },
      { provider: 'pool', key: 'limited', state: 'ok', cooling_until: null, calls: calls('limited') },
    ]);
    for (const key of SECRETS) {
      expect(metrics).not.toContain(key);
      expect(JSON.stringify(catalog.body)).not.toContain(key);
    }
  });

  it('logs the refusal and the cool-down by key name, and no key anywhere', () => {
    const entries = logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries.filter((entry) => entry.msg === 'upstream key refused: it leaves the pool until restart')).toEqual([
      expect.objectContaining({ level: 50, provider: 'pool', key: 'revoked', status: 401 }),
    ]);
    expect(entries.some((entry) => entry.msg === 'upstream key rate limited: it cools down' && entry.key === 'limited')).toBe(true);
    const all = logs.join('');
    for (const key of SECRETS) expect(all).not.toContain(key);
  });
});

describe('a pool whose every key is refused', () => {
  let harness: Harness;
  let upstream: KeyedUpstream;

  beforeAll(async () => {
    upstream = await startKeyedUpstream(() => ({ status: 401 }));
    const keys = [1, 2, 3].map((index) => ({ name: `key-${index}`, env: `POOL_DEAD_${index}` }));
    harness = await startHarness({ catalog: poolCatalog(upstream.baseUrl, keys), env: { POOL_DEAD_1: 'sk-dead-1', POOL_DEAD_2: 'sk-dead-2', POOL_DEAD_3: 'sk-dead-3' } });
  });

  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it('answers the spec\'s 503 at once, having tried each key once, and bills nothing', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    for (let index = 0; index < 3; index++) {
      const answer = await harness.post('/v1/chat/completions', { model: 'pool-model', messages: [{ role: 'user', content: 'hi' }] }, secret);
      expect(answer.status).toBe(503);
      const body = (await answer.json()) as { error: Record<string, unknown> };
      expect(body.error).toMatchObject({ message: 'The requested model is currently unavailable.', type: 'service_api_error', code: 'model_not_found' });
      expect(JSON.stringify(body)).not.toMatch(/sk-dead/);
    }
    expect(upstream.calls.map((call) => call.key).sort()).toEqual(['sk-dead-1', 'sk-dead-2', 'sk-dead-3']);
    expect(await settledCharges(harness, accountId, '1')).toEqual([]);
  });
});

describe('a pool in the catalog', () => {
  const start = (keys: unknown[], env: Record<string, string> = {}, extra: Record<string, unknown> = {}) => {
    const catalog = poolCatalog('http://127.0.0.1:9/v1', keys);
    const providers = catalog.providers as Array<Record<string, unknown>>;
    return startHarness({ catalog: { ...catalog, providers: [{ ...providers[0], ...extra }] }, env });
  };

  it.each([
    ['duplicate names', [{ name: 'a', env: 'K1' }, { name: 'a', env: 'K2' }], {}, 'providers[0].api_keys: key names must not repeat'],
    ['both api_key_env and api_keys', [{ name: 'a', env: 'K1' }], { api_key_env: 'K2' }, 'providers[0].api_keys: give api_key_env or api_keys, not both'],
    ['an empty pool', [], {}, 'providers[0].api_keys: Too small'],
    ['a key with env and file', [{ name: 'a', env: 'K1', file: '/tmp/k' }], {}, /give exactly one of env and file/],
    ['a key with neither', [{ name: 'a' }], {}, /give exactly one of env and file/],
    ['a name that is no label', [{ name: 'a key', env: 'K1' }], {}, /a key name/],
  ])('refuses %s at startup, naming the field', async (_case, keys, extra, message) => {
    await expect(start(keys, { K1: 'sk-1', K2: 'sk-2' }, extra)).rejects.toThrow(message);
  });

  it('takes a pool on every key-authenticated provider type, and on azure only instead of api_key_env and entra', () => {
    const keys = [{ name: 'a', env: 'K1' }, { name: 'b', file: '/run/secrets/k2' }];
    const bases = [
      { name: 'o', type: 'openai', base_url: 'https://api.openai.com/v1' },
      { name: 'c', type: 'anthropic', base_url: 'https://api.anthropic.com/v1' },
      { name: 'g', type: 'gemini', base_url: 'https://generativelanguage.googleapis.com/v1beta' },
      { name: 'z', type: 'azure', endpoint: 'https://my-resource.openai.azure.com', url_form: 'v1' },
    ];
    for (const base of bases) expect(providerSchema.parse({ ...base, api_keys: keys })).toMatchObject({ api_keys: keys });
    const entra = { tenant_id: 'contoso.onmicrosoft.com', client_id: 'c', client_secret_env: 'S' };
    const azure = bases[3]!;
    expect(providerSchema.safeParse({ ...azure, api_keys: keys, entra }).success).toBe(false);
    expect(providerSchema.safeParse({ ...azure, api_keys: keys, api_key_env: 'K' }).success).toBe(false);
    expect(providerSchema.safeParse({ name: 's', type: 'simulated', api_keys: keys }).success).toBe(false);
  });

  it('takes the README catalog example of a pool', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const block = /```yaml\n(providers:[\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const pools = (parse(block) as { providers: Array<Record<string, unknown>> }).providers.filter((entry) => entry.api_keys !== undefined);
    expect(pools.map((entry) => providerSchema.parse(entry))).toMatchObject([
      { name: 'openai-pool', type: 'openai', api_keys: [{ name: 'primary', env: 'OPENAI_KEY_A' }, { name: 'secondary', env: 'OPENAI_KEY_B' }, { name: 'mounted', file: '/run/secrets/openai-key-c' }] },
    ]);
  });

  it('refuses to start when a key\'s variable is unset or its file unreadable, naming the key and never a value', async () => {
    await expect(start([{ name: 'a', env: 'K1' }, { name: 'b', env: 'POOL_UNSET' }], { K1: 'sk-1' })).rejects.toThrow('openai provider "pool", key "b": environment variable POOL_UNSET is not set');
    await expect(start([{ name: 'a', file: '/nonexistent/tollgate-key' }])).rejects.toThrow('openai provider "pool", key "a": the file /nonexistent/tollgate-key cannot be read (ENOENT)');
  });
});
