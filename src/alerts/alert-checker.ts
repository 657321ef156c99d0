/**
 * Alert sources that watch the database (docs/architecture.md, "Alerts"). A checker runs in the
 * background every `alerts.check_ms`, finds the conditions that crossed since it last looked (one
 * cheap query), and raises each one through a claim: the claim's primary key in the database makes
 * the crossing fire once however many instances see it, and the event's deliveries are queued in
 * the same transaction. When a condition clears, the checker re-arms it by releasing its claim.
 *
 * Conditions that reset with a period (a key's daily budget) put the period in the claim's scope,
 * so each period fires once and needs no re-arming.
 */
import type { AlertEventType } from '../config/schema.js';
import type { AlertClaim } from '../store/store.js';

export interface AlertCheckContext {
  now: Date;
  /**
   * Claims the condition and, when this call got the claim, queues the event for every webhook
   * subscribed to `type`. Returns whether this call raised it.
   */
  raise(claim: AlertClaim, type: AlertEventType, data: Record<string, unknown>): Promise<boolean>;
  /** The condition cleared: its next crossing fires again. */
  rearm(claim: AlertClaim): Promise<void>;
}

export interface AlertChecker {
  /** For logs. */
  readonly name: string;
  /** The events it raises: it runs only when a webhook is subscribed to one of them. */
  readonly eventTypes: readonly AlertEventType[];
  check(context: AlertCheckContext): Promise<void>;
}
