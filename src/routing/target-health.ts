/**
 * Remembers which targets keep failing. After `failureThreshold` failures in a row a target is
 * skipped for `cooldownMs`; one success resets it. Credentials refused take a target out at once.
 *
 * A target is *down* from the first cool-down until its next success (cool-downs in between do not
 * count again): `recordFailure` and `recordSuccess` return the transition, if any, so that the
 * router can report it (`target.down` and `target.up` alerts). The state lives in this process.
 */
export interface HealthOptions {
  failureThreshold: number;
  cooldownMs: number;
  now: () => number;
}

interface TargetState {
  consecutiveFailures: number;
  coolingUntil: number;
  /** Taken out of rotation, and not yet answered since. */
  down: boolean;
}

/** What one label looks like now. */
export interface HealthStatus {
  /** Skipped until this time (ms since epoch); null when usable. */
  coolingUntil: number | null;
  /** Failures in a row since the last success or cool-down. */
  consecutiveFailures: number;
  /** Taken out of rotation and not answered since (it may be usable again, to be tried). */
  down: boolean;
}

export class TargetHealth {
  private readonly states = new Map<string, TargetState>();
  constructor(private readonly options: HealthOptions) {}

  isUsable(label: string): boolean {
    const state = this.states.get(label);
    return state === undefined || state.coolingUntil <= this.options.now();
  }

  status(label: string): HealthStatus {
    const state = this.states.get(label);
    if (state === undefined) return { coolingUntil: null, consecutiveFailures: 0, down: false };
    return { coolingUntil: state.coolingUntil > this.options.now() ? state.coolingUntil : null, consecutiveFailures: state.consecutiveFailures, down: state.down };
  }

  /** Returns `up` when this success brings back a target that was down. */
  recordSuccess(label: string): 'up' | undefined {
    const state = this.states.get(label);
    if (state === undefined) return undefined;
    this.states.delete(label);
    return state.down ? 'up' : undefined;
  }

  /** Returns `down` when this failure takes the target out of rotation (and it was not down already). */
  recordFailure(label: string, severe = false): 'down' | undefined {
    const state = this.states.get(label) ?? { consecutiveFailures: 0, coolingUntil: 0, down: false };
    state.consecutiveFailures += 1;
    let transition: 'down' | undefined;
    if (severe || state.consecutiveFailures >= this.options.failureThreshold) {
      state.coolingUntil = this.options.now() + this.options.cooldownMs;
      state.consecutiveFailures = 0;
      if (!state.down) transition = 'down';
      state.down = true;
    }
    this.states.set(label, state);
    return transition;
  }
}
