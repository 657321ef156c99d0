/**
 * How a webhook request is signed (README, "Alerts", which shows the receiver's side): the
 * signature is HMAC-SHA256, keyed with the webhook's secret (its UTF-8 bytes), over
 * `${timestamp}.${body}`, where the timestamp is the attempt's Unix time in seconds, also sent
 * as a header. Signing the timestamp lets a receiver refuse replays of old requests; the `v1=`
 * prefix leaves room for another scheme beside it later, as Stripe's header does.
 */
import { createHmac } from 'node:crypto';

export const WEBHOOK_HEADERS = {
  /** The event id: the same on every attempt, so a receiver can drop repeats. */
  eventId: 'tollgate-event-id',
  timestamp: 'tollgate-timestamp',
  signature: 'tollgate-signature',
} as const;

export function webhookSignature(secret: string, timestampSeconds: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.${body}`, 'utf8').digest('hex');
}

/** The headers of one attempt. */
export function signedHeaders(secret: string, eventId: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'tollgate-webhooks/1',
    [WEBHOOK_HEADERS.eventId]: eventId,
    [WEBHOOK_HEADERS.timestamp]: String(timestamp),
    [WEBHOOK_HEADERS.signature]: `v1=${webhookSignature(secret, timestamp, body)}`,
  };
}

/** The headers of an attempt to a chat webhook (unsigned: its URL is its secret). */
export function plainHeaders(eventId: string): Record<string, string> {
  return { 'content-type': 'application/json', 'user-agent': 'tollgate-webhooks/1', [WEBHOOK_HEADERS.eventId]: eventId };
}
