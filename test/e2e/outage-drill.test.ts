/**
 * An outage drill, end to end on SQLite and PostgreSQL: an upstream double (OpenAI's wire format)
 * answers 500 until its target leaves rotation; a Slack incoming webhook (a local receiver on a
 * Slack-like path) gets the outage in Slack's shape, then the recovery; the deliveries list shows
 * both with their destination; an operator resends one, which arrives again under a new event id
 * and is in the audit log; a viewer may not resend. Also `slow_answer`, to a Discord webhook: one
 * alert for a slow period, however many slow answers it holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { fixture } from '../../src/providers/openai/__fixtures__/fixtures.js';
import { adminClient, type AdminCall } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startSlackOutageAlerts } from '../support/slack-outage-alerts.js';
import { json, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';
import { startWebhookReceiver, until, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';

const TARGET = 'upstream/upstream-model';

interface SlackBody {
  text: string;
  blocks: Array<{ type: string; text: { type: string; text: string } }>;
}
const slack = (webhook: ReceivedWebhook) => webhook.body as unknown as SlackBody;

describe.each(engines)('outage drill with a Slack webhook on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let receiver: WebhookReceiver;
  let call: AdminCall;
  let owner: string;
  let operator: string;
  let viewer: string;
  let secret: string;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(json(500, fixture('error-500.json')));
    // The first attempt at the recovery fails once, so the list shows a retry.
    const alerts = await startSlackOutageAlerts(upstream.baseUrl);
    receiver = alerts.receiver;
    harness = await startHarness({ engine, catalog: alerts.catalog, env: { TEST_UPSTREAM_KEY: 'sk-upstream-test' }, router: { failureThreshold: 2, cooldownMs: 300 } });
    call = adminClient(harness.baseUrl);
    owner = (await createAdminToken(harness.store, { role: 'owner' }, CLI_ACTOR)).secret;
    operator = (await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR)).secret;
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    secret = (await harness.newAccount('10')).secret;
  });

  afterAll(async () => {
    await harness?.close();
    await Promise.all([upstream?.close(), receiver?.close()]);
  });

  const chat = () => harness.post('/v1/chat/completions', { model: 'relay-model', messages: [{ role: 'user', content: 'hi' }] }, secret);
  const deliveries = async () => {
    const answer = await call('GET', '/alerts/deliveries', viewer);
    expect(answer.status).toBe(200);
    return answer.body.data as Array<Record<string, unknown>>;
  };

  it('tells Slack of the outage and the recovery, lists both, and resends one (audited)', async () => {
    for (let index = 0; index < 2; index++) expect((await chat()).status).toBe(503);
    await until('the outage in Slack', () => receiver.accepted().length === 1);
    const down = receiver.accepted()[0]!;
    expect(down.headers['content-type']).toBe('application/json');
    expect(down.headers['tollgate-signature']).toBeUndefined();
    expect(Object.keys(down.body).sort()).toEqual(['blocks', 'text']);
    expect(slack(down).blocks.map((block) => [block.type, block.text.type])).toEqual([['header', 'plain_text'], ['section', 'plain_text']]);
    expect(slack(down).blocks[0]!.text.text).toBe(`Tollgate: target ${TARGET} is out of rotation`);
    expect(slack(down).text).toContain('Failure: status (HTTP 500)');
    expect(slack(down).text).toMatch(/When: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);

    upstream.answer(json(200, fixture('chat-completion.json')));
    await until('the target to serve again', async () => (await chat()).status === 200);
    await until('the recovery in Slack', () => receiver.accepted().length === 2);
    const up = receiver.accepted()[1]!;
    expect(slack(up).blocks[0]!.text.text).toBe(`Tollgate: target ${TARGET} is back in rotation`);
    expect(receiver.received.map((each) => each.status)).toEqual([200, 503, 200]);

    const listed = await deliveries();
    expect(listed.map((row) => [row.type, row.state])).toEqual([['target.up', 'delivered'], ['target.down', 'delivered']]);
    const destination = { format: 'slack', origin: new URL(receiver.url).origin };
    expect(listed[0]).toMatchObject({ destination, attempts: 2, last_http_status: null, resend_of: null, finished_at: expect.any(String) });
    expect(listed[1]).toMatchObject({ destination, attempts: 1, last_error: null });
    expect(JSON.stringify(listed)).not.toContain('/services/');

    // A viewer may not resend; an unknown delivery is not found; a bad id is refused.
    const downRow = listed[1]!;
    expect((await call('POST', `/alerts/deliveries/${String(downRow.id)}/resend`, viewer)).status).toBe(403);
    expect((await call('POST', '/alerts/deliveries/99999999/resend', operator)).status).toBe(404);
    expect((await call('POST', '/alerts/deliveries/abc/resend', operator)).status).toBe(400);

    const resent = await call('POST', `/alerts/deliveries/${String(downRow.id)}/resend`, operator);
    expect(resent.status).toBe(201);
    expect(resent.body).toMatchObject({ type: 'target.down', state: 'pending', resend_of: downRow.event_id, destination });
    expect(resent.body.event_id).not.toBe(downRow.event_id);
    await until('the resend in Slack', () => receiver.accepted().length === 3);
    const again = receiver.accepted()[2]!;
    expect(again.headers['tollgate-event-id']).toBe(resent.body.event_id);
    expect(slack(again).text).toBe(slack(down).text);
    await until('the resend delivered', async () => (await deliveries())[0]?.state === 'delivered');
    expect((await deliveries()).map((row) => row.type)).toEqual(['target.down', 'target.up', 'target.down']);

    const audit = await call('GET', `/audit?target_type=alert_delivery&target_id=${String(downRow.id)}`, owner);
    expect(audit.status).toBe(200);
    const entries = audit.body.data as Array<Record<string, unknown>>;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'alert_delivery.resend',
      target_type: 'alert_delivery',
      target_id: String(downRow.id),
      before: { event_id: downRow.event_id, state: 'delivered' },
      after: { id: resent.body.id, event_id: resent.body.event_id, resend_of: downRow.event_id },
    });
    expect(entries[0]!.admin_token_id).toEqual(expect.any(String));
  });
});

describe('slow answers to a Discord webhook', () => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let receiver: WebhookReceiver;
  let secret: string;
  /** The upstream waits this long before answering. */
  let delayMs = 250;

  beforeAll(async () => {
    const answer = json(200, fixture('chat-completion.json'));
    upstream = await startUpstreamDouble(async (request, response, raw) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      await answer(request, response, raw);
    });
    receiver = await startWebhookReceiver({ path: '/api/webhooks/1/token' });
    const catalog = {
      ...(testCatalog({ upstreamBaseUrl: upstream.baseUrl }) as Record<string, unknown>),
      alerts: {
        webhooks: [{ url: receiver.url, format: 'discord', events: ['slow_answer'] }],
        slow_answer: { duration_ms: 150, rearm_seconds: 3600 },
        delivery: { poll_ms: 25, first_retry_ms: 50, max_retry_ms: 200 },
      },
    };
    harness = await startHarness({ catalog, env: { TEST_UPSTREAM_KEY: 'sk-upstream-test' } });
    secret = (await harness.newAccount('10')).secret;
  });

  afterAll(async () => {
    await harness?.close();
    await Promise.all([upstream?.close(), receiver?.close()]);
  });

  const chat = () => harness.post('/v1/chat/completions', { model: 'relay-model', messages: [{ role: 'user', content: 'hi' }] }, secret);

  it('sends one slow_answer for a slow period, naming the model and what was slow', async () => {
    for (let index = 0; index < 3; index++) expect((await chat()).status).toBe(200);
    await until('the slow answer in Discord', () => receiver.accepted().length >= 1);
    delayMs = 0;
    expect((await chat()).status).toBe(200);
    // Give a second alert every chance to arrive: there must be none.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.accepted()).toHaveLength(1);
    const body = receiver.accepted()[0]!.body as unknown as { content: string; embeds: Array<{ title: string; description: string; timestamp: string }>; allowed_mentions: unknown };
    expect(body.content).toBe('Tollgate: model relay-model answers slowly');
    expect(body.embeds[0]!.description).toMatch(/^Model: relay-model\nTarget: upstream\/upstream-model\nFirst byte: \d+ ms \(threshold none\)\nDuration: (\d+) ms \(threshold 150 ms\)\n/);
    expect(Number(/Duration: (\d+) ms/.exec(body.embeds[0]!.description)![1])).toBeGreaterThan(150);
    expect(body.allowed_mentions).toEqual({ parse: [] });
  });
});
