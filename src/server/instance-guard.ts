/**
 * Several instances on one database must share their rate limits (Redis), or else each counts on
 * its own and together they admit several times the configured limits. Every instance writes a
 * heartbeat to the store; at startup an instance without shared limits (or one that finds such
 * another) refuses to start, unless the operator has said per-instance limits are acceptable.
 */
import { hostname } from 'node:os';
import { ENV } from '../config/env.js';
import type { InstanceRecord, OperationsStore } from '../store/store.js';

export interface InstanceIdentity {
  /** Stable across restarts of the same instance (see instanceIdFor), so a crash leaves no rival behind. */
  id: string;
  /** Whether this instance counts its limits in the shared store (Redis). */
  sharedLimits: boolean;
}

export interface InstanceCheckOptions {
  acceptLocalLimits: boolean;
  now?: () => Date;
  /** An instance without a heartbeat for this long is taken as stopped (default 30 s). */
  staleAfterMs?: number;
}

export interface Heartbeat {
  /** Stops beating and removes this instance's row, so a restart elsewhere need not wait for it to go stale. */
  stop(): Promise<void>;
}

export const DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;
export const DEFAULT_STALE_AFTER_MS = 30_000;

/**
 * The id of the instance serving `port` on this machine: two live instances cannot share it, and a
 * restarted instance gets its old one back. With port 0 (chosen by the system) the process id
 * stands in for the port.
 */
export function instanceIdFor(port: number): string {
  return `${hostname()}:${port === 0 ? `pid${process.pid}` : port}`;
}

/** Reads TOLLGATE_ACCEPT_LOCAL_LIMITS: `1`/`true`/`yes` accept, unset/empty/`0`/`false`/`no` do not. */
export function acceptLocalLimitsFrom(env: Readonly<Record<string, string | undefined>>): boolean {
  const value = (env[ENV.acceptLocalLimits] ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes'].includes(value)) return true;
  if (['', '0', 'false', 'no'].includes(value)) return false;
  throw new Error(`${ENV.acceptLocalLimits} must be 1 or 0, got ${JSON.stringify(env[ENV.acceptLocalLimits])}`);
}

/**
 * Throws an Error with the operator's message when another live instance exists and this one or
 * that one counts limits on its own, unless `acceptLocalLimits`. Run it after this instance's
 * first heartbeat (guardInstance does both), so two instances starting together see each other.
 */
export async function checkInstances(store: OperationsStore, self: InstanceIdentity, options: InstanceCheckOptions): Promise<void> {
  if (options.acceptLocalLimits) return;
  const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  const now = (options.now ?? (() => new Date()))();
  const others = (await store.liveInstances(new Date(now.getTime() - staleAfterMs))).filter((instance) => instance.id !== self.id);
  const unshared = others.filter((instance) => !instance.sharedLimits);
  if (others.length === 0 || (self.sharedLimits && unshared.length === 0)) return;
  throw new Error(localLimitsMessage(self, others, unshared, now, staleAfterMs));
}

function localLimitsMessage(self: InstanceIdentity, others: InstanceRecord[], unshared: InstanceRecord[], now: Date, staleAfterMs: number): string {
  const describe = (instance: InstanceRecord) => `${instance.id} (last seen ${Math.max(0, Math.round((now.getTime() - instance.lastSeenAt.getTime()) / 1000))} s ago)`;
  const lacking = [...(self.sharedLimits ? [] : ['this instance']), ...unshared.map((instance) => `instance ${instance.id}`)];
  return [
    `Refusing to start: ${others.length === 1 ? 'another Tollgate instance uses' : `${others.length} other Tollgate instances use`} this database: ${others.map(describe).join(', ')}.`,
    `${lacking.join(' and ')} ${lacking.length === 1 ? 'has' : 'have'} no shared limit store, so each instance would count rate limits on its own and together they would admit several times the configured limits.`,
    `Set ${ENV.redisUrl} (the same Redis) on every instance to share the limits, or set ${ENV.acceptLocalLimits}=1 to accept per-instance limits.`,
    `An instance that has stopped without saying so counts as gone ${Math.round(staleAfterMs / 1000)} s after its last heartbeat.`,
  ].join(' ');
}

/**
 * Writes this instance's heartbeat now and every `intervalMs` (keep it well under the stale time).
 * A failed beat goes to `onError`; the next one tries again.
 */
export function startHeartbeat(
  store: OperationsStore,
  self: InstanceIdentity,
  intervalMs: number = DEFAULT_HEARTBEAT_INTERVAL_MS,
  options: { now?: () => Date; onError?: (error: unknown) => void } = {},
): Heartbeat {
  const now = options.now ?? (() => new Date());
  let beating: Promise<void> = Promise.resolve();
  const beat = () => {
    beating = store.heartbeat({ ...self, lastSeenAt: now() }).catch((error: unknown) => options.onError?.(error));
  };
  beat();
  const timer = setInterval(beat, intervalMs);
  // The heartbeat alone must not keep a stopping process alive.
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      // A beat landing after the removal would bring the row back.
      await beating;
      await store.removeInstance(self.id);
    },
  };
}

/**
 * Startup in one call: the first heartbeat, then the check. When the check refuses, the heartbeat
 * is stopped (this instance's row removed) and the Error is thrown for `serve` to print and exit.
 */
export async function guardInstance(
  store: OperationsStore,
  self: InstanceIdentity,
  options: InstanceCheckOptions & { intervalMs?: number; onError?: (error: unknown) => void },
): Promise<Heartbeat> {
  const now = options.now ?? (() => new Date());
  await store.heartbeat({ ...self, lastSeenAt: now() });
  try {
    await checkInstances(store, self, options);
  } catch (error) {
    await store.removeInstance(self.id);
    throw error;
  }
  return startHeartbeat(store, self, options.intervalMs, { now, onError: options.onError });
}
