/**
 * The alerting side of an outage drill: a Slack incoming webhook (a local receiver on a Slack-like
 * path) whose first try of the recovery, its second request, fails once so that the deliveries
 * list shows a retry; and the test catalog, on the upstream at `upstreamBaseUrl`, that sends it
 * `target.down` and `target.up`.
 */
import { testCatalog } from './catalog.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

export async function startSlackOutageAlerts(upstreamBaseUrl: string): Promise<{ receiver: WebhookReceiver; catalog: Record<string, unknown> }> {
  const receiver = await startWebhookReceiver({ path: '/services/T000/B000/XXXX', status: (index) => (index === 1 ? 503 : 200) });
  const catalog = {
    ...(testCatalog({ upstreamBaseUrl }) as Record<string, unknown>),
    alerts: {
      webhooks: [{ url: receiver.url, format: 'slack', events: ['target.down', 'target.up'] }],
      delivery: { poll_ms: 25, first_retry_ms: 50, max_retry_ms: 200 },
    },
  };
  return { receiver, catalog };
}
