/**
 * `upstream_key.refused`: the upstream refused one key of a provider's pool (401, 403), which left
 * the pool until the process restarts (docs/architecture.md, "Pools of upstream keys"). Pools live
 * in each process, so each instance (each worker) tells it once per key, and names itself in
 * `instance`. The key is named by its catalog name, never by its secret.
 */
import type { Alerts } from './alerts.js';
import { INSTANCE } from './target-events.js';

export interface KeyRefusal {
  /** The provider's name in the catalog. */
  provider: string;
  /** The key's name in the provider's `api_keys`. */
  key: string;
  /** The upstream's status (401, 403, or the status of a body that said the key is bad). */
  status: number;
}

export function publishKeyRefused(alerts: Alerts, refusal: KeyRefusal): void {
  if (!alerts.wants('upstream_key.refused')) return;
  alerts.publish('upstream_key.refused', { provider: refusal.provider, key: refusal.key, status: refusal.status, instance: INSTANCE });
}
