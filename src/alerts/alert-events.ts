/**
 * Alert events as webhooks receive them (README, "Alerts"): one JSON envelope per event, its id
 * the idempotency id every attempt carries, and one outbox row per webhook subscribed to its type.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { AlertEventType, WebhookFormat } from '../config/schema.js';
import type { NewAlertDelivery } from '../store/store.js';

/** A configured webhook, its secret read from the environment at startup. */
export interface Webhook {
  /** Derived from the URL (see webhookIdOf): how outbox rows name it without storing the URL. */
  id: string;
  url: string;
  /** What the body looks like (chat-payloads.ts); only `generic` is signed. */
  format: WebhookFormat;
  /** The signing secret of a `generic` webhook. */
  secret?: string;
  events: ReadonlySet<AlertEventType>;
}

/** What a receiver gets as the body: `id` is also the `Tollgate-Event-Id` header. */
export interface AlertEnvelope {
  id: string;
  type: AlertEventType;
  /** ISO 8601, when the gateway saw the event. */
  created_at: string;
  data: Record<string, unknown>;
  /** On a resend (POST /admin/v1/alerts/deliveries/{id}/resend): the id of the event sent again. */
  resend_of?: string;
}

/**
 * A short hash of the URL: the outbox names webhooks by it, so a URL that carries a secret (as
 * chat webhooks do) is never written to the database.
 */
export function webhookIdOf(url: string): string {
  return `wh_${createHash('sha256').update(url).digest('hex').slice(0, 16)}`;
}

export function newEventId(): string {
  return `evt_${randomUUID().replaceAll('-', '')}`;
}

/** The outbox rows of one event: one per webhook that wants its type (none: nobody asked). */
export function deliveriesOf(type: AlertEventType, data: Record<string, unknown>, webhooks: readonly Webhook[], now: Date): NewAlertDelivery[] {
  const subscribed = webhooks.filter((webhook) => webhook.events.has(type));
  if (subscribed.length === 0) return [];
  const envelope: AlertEnvelope = { id: newEventId(), type, created_at: now.toISOString(), data };
  const body = JSON.stringify(envelope);
  return subscribed.map((webhook) => ({ eventId: envelope.id, eventType: type, webhookId: webhook.id, body, createdAt: now }));
}

/** Where a webhook points, for logs: scheme, host and port only (paths and queries may hold secrets). */
export function describeWebhook(webhook: Pick<Webhook, 'id' | 'url'>): string {
  return `${webhook.id} (${new URL(webhook.url).origin})`;
}
