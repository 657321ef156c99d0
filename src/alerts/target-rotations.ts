/**
 * The history of targets going out of rotation and back (docs/architecture.md, "Outages in sight"):
 * each health change this process sees is written to `target_rotations`, whether or not a webhook
 * wants `target.down`/`target.up`. Writes run one after another off the request path (a `down` is
 * always written before its `up`); a failed write is logged and the history misses that change.
 */
import type { Logger } from 'pino';
import type { HealthChange } from '../routing/router.js';
import type { OperationsStore } from '../store/store.js';
import { INSTANCE } from './target-events.js';

export interface RotationRecorder {
  /** Returns at once; the write follows the ones before it. */
  record(change: HealthChange): void;
  /** Resolves once every write asked for so far has ended. */
  flush(): Promise<void>;
}

export function createRotationRecorder(store: Pick<OperationsStore, 'openTargetRotation' | 'closeTargetRotation'>, logger: Pick<Logger, 'warn'>, now: () => number): RotationRecorder {
  let chain: Promise<void> = Promise.resolve();
  return {
    record(change) {
      const at = new Date(now());
      const write = () =>
        change.transition === 'down'
          ? store.openTargetRotation({
              target: change.label,
              scope: change.scope,
              provider: change.provider,
              instance: INSTANCE,
              downAt: at,
              failureKind: change.failure?.kind ?? null,
              failureStatus: change.failure?.status ?? null,
              coolingUntil: change.coolingUntil === undefined ? null : new Date(change.coolingUntil),
            })
          : store.closeTargetRotation({ target: change.label, instance: INSTANCE, upAt: at });
      chain = chain.then(write).catch((error: unknown) => logger.warn({ err: error, target: change.label, transition: change.transition }, 'recording a target rotation failed'));
    },
    flush: () => chain,
  };
}
