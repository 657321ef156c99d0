/**
 * `target.down` and `target.up`: a target (or a whole provider whose credentials were refused)
 * taken out of rotation by this process, and back when it answers again. Health is kept per
 * process, so each instance (each worker) reports what it saw, and names itself in `instance`.
 */
import { hostname } from 'node:os';
import type { HealthChange } from '../routing/router.js';
import type { Alerts } from './alerts.js';

/** This process, as the events it alone saw name it. */
export const INSTANCE = `${hostname()}:${process.pid}`;

export function publishHealthChange(alerts: Alerts, change: HealthChange): void {
  const type = change.transition === 'down' ? 'target.down' : 'target.up';
  if (!alerts.wants(type)) return;
  alerts.publish(type, {
    scope: change.scope,
    target: change.label,
    provider: change.provider,
    ...(change.upstreamModel === undefined ? {} : { model: change.upstreamModel }),
    ...(change.coolingUntil === undefined ? {} : { cooling_until: new Date(change.coolingUntil).toISOString() }),
    ...(change.failure === undefined ? {} : { failure: change.failure }),
    instance: INSTANCE,
  });
}
