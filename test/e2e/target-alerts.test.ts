/**
 * A target taken out of rotation and back, end to end on SQLite and PostgreSQL: an upstream
 * double (a real HTTP server speaking OpenAI's wire format) answers 500 until the test lets it
 * recover; the webhook receiver gets `target.down` then `target.up`, signed; and the admin catalog
 * shows the target cooling down, until when, then healthy again. Also the catalog's shape and who
 * may read it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { fixture } from '../../src/providers/openai/__fixtures__/fixtures.js';
import { adminClient, type AdminCall } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { json, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';
import { startWebhookReceiver, until, verifyWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET = 'whsec-targets-5555';
/** Long enough for the catalog to be read while it lasts; the test waits it out once. */
const COOLDOWN_MS = 1_500;
const TARGET = 'upstream/upstream-model';

describe.each(engines)('target alerts and the admin catalog on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let receiver: WebhookReceiver;
  let call: AdminCall;
  let viewer: string;
  let secret: string;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(json(500, fixture('error-500.json')));
    receiver = await startWebhookReceiver();
    const catalog = {
      ...(testCatalog({ upstreamBaseUrl: upstream.baseUrl }) as Record<string, unknown>),
      alerts: {
        webhooks: [{ url: receiver.url, secret_env: 'TARGETS_SECRET', events: ['target.down', 'target.up'] }],
        delivery: { poll_ms: 25, first_retry_ms: 50, max_retry_ms: 200 },
      },
    };
    harness = await startHarness({
      engine,
      catalog,
      env: { TEST_UPSTREAM_KEY: 'sk-upstream-test', TARGETS_SECRET: SECRET },
      router: { failureThreshold: 2, cooldownMs: COOLDOWN_MS },
    });
    call = adminClient(harness.baseUrl);
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    secret = (await harness.newAccount('10')).secret;
  });

  afterAll(async () => {
    await harness?.close();
    await Promise.all([upstream?.close(), receiver?.close()]);
  });

  const chat = () => harness.post('/v1/chat/completions', { model: 'relay-model', messages: [{ role: 'user', content: 'hi' }] }, secret);
  const targetHealth = async () => {
    const answer = await call('GET', '/catalog', viewer);
    expect(answer.status).toBe(200);
    return (answer.body.targets as Array<Record<string, unknown>>).find((target) => target.target === TARGET);
  };

  it('describes models with prices and efforts, and targets with their health, to viewers', async () => {
    const answer = await call('GET', '/catalog', viewer);
    expect(answer.status).toBe(200);
    const models = answer.body.models as Array<Record<string, unknown>>;
    expect(models.find((model) => model.id === 'model-5.6')).toEqual({
      id: 'model-5.6',
      enabled: true,
      prices: { input_usd: '1', cached_input_usd: '0.5', cache_write_usd: '1', output_usd: '4' },
      unit_prices_usd: {},
      endpoints: ['/v1/responses', '/v1/chat/completions', '/v1/messages'],
      reasoning_efforts: ['low', 'medium', 'high', 'xhigh', 'max'],
      max_output_tokens: 4096,
      hosted_tools: 'drop',
      targets: [{ target: 'sim/model-5.6', priority: 0, weight: 1 }],
    });
    expect(models.find((model) => model.id === 'failover-model')?.targets).toEqual([
      { target: 'sim-fail-before/failover-model', priority: 0, weight: 1 },
      { target: 'sim/failover-model', priority: 1, weight: 1 },
    ]);
    expect(models.find((model) => model.id === 'disabled-model')?.enabled).toBe(false);
    const targets = answer.body.targets as Array<Record<string, unknown>>;
    expect(targets.find((target) => target.target === 'sim/model-5.6')).toEqual({
      target: 'sim/model-5.6',
      provider: 'sim',
      provider_type: 'simulated',
      model: 'model-5.6',
      status: 'healthy',
      cooling_until: null,
      cause: null,
      consecutive_failures: 0,
    });
    expect(await targetHealth()).toMatchObject({ provider: 'upstream', provider_type: 'openai', model: 'upstream-model', status: 'healthy' });
    expect(Date.parse(String(answer.body.observed_at))).not.toBeNaN();

    const { secret: apiKey } = await harness.newAccount('1');
    for (const token of [null, apiKey, 'tg-admin-madeup']) expect((await call('GET', '/catalog', token)).status).toBe(401);
    expect((await call('POST', '/catalog', viewer, {})).status).toBe(404);
  });

  it('sends target.down when the upstream keeps failing and target.up when it answers again; the catalog follows', async () => {
    // Two failures in a row take the only target out: both requests get the spec's 503.
    for (let index = 0; index < 2; index++) expect((await chat()).status).toBe(503);
    expect(upstream.requests).toHaveLength(2);
    await until('target.down', () => receiver.accepted().some((webhook) => webhook.body.type === 'target.down'));
    const down = receiver.accepted().find((webhook) => webhook.body.type === 'target.down')!;
    expect(verifyWebhook(SECRET, down)).toBe(true);
    expect(down.headers['tollgate-event-id']).toBe(down.body.id);
    expect(down.body.data).toEqual({
      scope: 'target',
      target: TARGET,
      provider: 'upstream',
      model: 'upstream-model',
      cooling_until: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      failure: { kind: 'status', status: 500 },
      instance: expect.stringMatching(/:\d+$/),
    });
    expect(await targetHealth()).toMatchObject({ status: 'cooling_down', cause: 'failures', cooling_until: down.body.data.cooling_until });
    // While it cools, requests are refused without reaching the upstream.
    expect((await chat()).status).toBe(503);
    expect(upstream.requests).toHaveLength(2);

    upstream.answer(json(200, fixture('chat-completion.json')));
    await until('the target to serve again', async () => (await chat()).status === 200);
    await until('target.up', () => receiver.accepted().some((webhook) => webhook.body.type === 'target.up'));
    const up = receiver.accepted().find((webhook) => webhook.body.type === 'target.up')!;
    expect(verifyWebhook(SECRET, up)).toBe(true);
    expect(up.body.id).not.toBe(down.body.id);
    expect(up.body.data).toEqual({ scope: 'target', target: TARGET, provider: 'upstream', model: 'upstream-model', instance: down.body.data.instance });
    expect(await targetHealth()).toMatchObject({ status: 'healthy', cooling_until: null, cause: null, consecutive_failures: 0 });
    // One outage, one pair of events.
    expect(receiver.accepted().map((webhook) => webhook.body.type)).toEqual(['target.down', 'target.up']);
  });
});
