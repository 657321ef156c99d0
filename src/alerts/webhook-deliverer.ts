/**
 * Delivers the webhook outbox, in the background of every instance (never on a request's path).
 * Each poll takes the deliveries that are due for this instance's webhooks (the store gives each
 * one to a single instance, with a lease that lets any instance retry it if this one dies), POSTs
 * them (the envelope signed, or a chat service's message rendered from it: chat-payloads.ts), and
 * records the outcome: a 2xx is delivered; anything else is tried again after a
 * wait that doubles from `first_retry_ms` up to `max_retry_ms` (each wait randomised by up to
 * half, so that failures do not come back in step), until `max_age_seconds` after the event,
 * when it is given up and logged. Rows are kept a while for the admin API, then pruned.
 */
import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import type { AlertsConfig } from '../config/schema.js';
import type { AlertDelivery, OperationsStore } from '../store/store.js';
import { describeWebhook, type AlertEnvelope, type Webhook } from './alert-events.js';
import { renderAlertBody } from './chat-payloads.js';
import { plainHeaders, signedHeaders } from './webhook-signature.js';

/** Deliveries one poll takes at most (they are posted in parallel). */
const BATCH_SIZE = 20;
/** How long a taken delivery stays this instance's beyond its attempt's timeout. */
const LEASE_MARGIN_MS = 5_000;
/** Delivered and abandoned rows are kept at least this long, for the admin API. */
const MIN_RETENTION_MS = 7 * 24 * 3_600_000;
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH_SIZE = 500;
/** Most bytes of a receiver's answer read (and thrown away) before the connection is reused. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface WebhookDelivererOptions {
  store: OperationsStore;
  webhooks: readonly Webhook[];
  delivery: AlertsConfig['delivery'];
  logger: Pick<Logger, 'info' | 'warn' | 'debug'>;
  now: () => number;
  random?: () => number;
}

export interface WebhookDeliverer {
  /** Delivers what is due now; one poll at a time (a call during a poll waits for it, then polls). */
  poll(): Promise<void>;
  /** Stops: aborts the attempts under way (their leases run out and they are retried later). */
  close(): Promise<void>;
}

export function createWebhookDeliverer(options: WebhookDelivererOptions): WebhookDeliverer {
  const { store, delivery, logger, now } = options;
  const random = options.random ?? Math.random;
  const webhooks = new Map(options.webhooks.map((webhook) => [webhook.id, webhook]));
  const webhookIds = [...webhooks.keys()];
  const agent = new Agent({ connect: { timeout: delivery.timeout_ms } });
  const stopping = new AbortController();
  const retentionMs = Math.max(MIN_RETENTION_MS, 2 * delivery.max_age_seconds * 1000);
  let running: Promise<void> | undefined;
  let again = false;
  let lastPrune = 0;

  const poll = (): Promise<void> => {
    if (stopping.signal.aborted) return Promise.resolve();
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await deliverDue();
        } while (again && !stopping.signal.aborted);
        await pruneNowAndThen();
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  async function deliverDue(): Promise<void> {
    for (;;) {
      const at = now();
      const taken = await store.claimAlertDeliveries({ webhookIds, now: new Date(at), leaseUntil: new Date(at + delivery.timeout_ms + LEASE_MARGIN_MS), limit: BATCH_SIZE });
      await Promise.all(taken.map((row) => attempt(row)));
      if (taken.length < BATCH_SIZE || stopping.signal.aborted) return;
    }
  }

  async function attempt(row: AlertDelivery): Promise<void> {
    const webhook = webhooks.get(row.webhookId);
    if (webhook === undefined) return;
    const maxAgeMs = delivery.max_age_seconds * 1000;
    if (now() - row.createdAt.getTime() > maxAgeMs) {
      // The last attempt's failure is kept (the admin API reads its HTTP status from it).
      const tooOld = 'older than alerts.delivery.max_age_seconds before it could be sent';
      await giveUp(row, webhook, row.lastError === null ? tooOld : `${row.lastError}; then ${tooOld}`);
      return;
    }
    const error = await post(webhook, row);
    if (stopping.signal.aborted && error !== undefined) return;
    if (error === undefined) {
      await store.finishAlertDelivery(row.id, { state: 'delivered', at: new Date(now()) });
      logger.debug({ eventId: row.eventId, type: row.eventType, webhook: describeWebhook(webhook), attempts: row.attempts }, 'webhook delivered');
      return;
    }
    const wait = retryDelay(row.attempts);
    if (now() + wait - row.createdAt.getTime() > maxAgeMs) {
      await giveUp(row, webhook, error);
      return;
    }
    await store.finishAlertDelivery(row.id, { state: 'pending', nextAttemptAt: new Date(now() + wait), error });
    logger.warn({ eventId: row.eventId, type: row.eventType, webhook: describeWebhook(webhook), attempts: row.attempts, retryInMs: wait, reason: error }, 'webhook delivery failed; will retry');
  }

  /** Undefined when the receiver took it (2xx), else why not. */
  async function post(webhook: Webhook, row: AlertDelivery): Promise<string | undefined> {
    const signal = AbortSignal.any([stopping.signal, AbortSignal.timeout(delivery.timeout_ms)]);
    try {
      const body = renderAlertBody(webhook.format, JSON.parse(row.body) as AlertEnvelope, row.body);
      const answer = await request(webhook.url, {
        method: 'POST',
        headers: webhook.secret === undefined ? plainHeaders(row.eventId) : signedHeaders(webhook.secret, row.eventId, body, new Date(now())),
        body,
        dispatcher: agent,
        signal,
        headersTimeout: delivery.timeout_ms,
        bodyTimeout: delivery.timeout_ms,
      });
      await drain(answer.body);
      return answer.statusCode >= 200 && answer.statusCode < 300 ? undefined : `answered HTTP ${answer.statusCode}`;
    } catch (error) {
      if (signal.aborted && !stopping.signal.aborted) return `no answer within ${delivery.timeout_ms} ms`;
      return `could not be reached: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`;
    }
  }

  async function giveUp(row: AlertDelivery, webhook: Webhook, reason: string): Promise<void> {
    await store.finishAlertDelivery(row.id, { state: 'abandoned', at: new Date(now()), error: reason });
    logger.warn({ eventId: row.eventId, type: row.eventType, webhook: describeWebhook(webhook), attempts: row.attempts, reason }, 'webhook delivery given up');
  }

  function retryDelay(attempts: number): number {
    const full = Math.min(delivery.max_retry_ms, delivery.first_retry_ms * 2 ** Math.min(attempts - 1, 30));
    return Math.round(full / 2 + (random() * full) / 2);
  }

  async function pruneNowAndThen(): Promise<void> {
    const at = now();
    if (at - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = at;
    const pruned = await store.pruneAlertDeliveries(new Date(at - retentionMs), PRUNE_BATCH_SIZE);
    if (pruned > 0) logger.info({ pruned }, 'old webhook deliveries pruned');
  }

  return {
    poll,
    async close() {
      stopping.abort();
      await running?.catch(() => undefined);
      await agent.close();
    },
  };
}

/** Reads a receiver's answer up to a bound and drops it (what it says is not ours to keep). */
async function drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<void> {
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (read > MAX_ANSWER_BYTES) {
      body.destroy();
      return;
    }
  }
}
