/**
 * Remembers which targets keep failing. After `failureThreshold` failures in a row a target is
 * skipped for `cooldownMs`; one success resets it. Credentials refused take a target out at once.
 */
export interface HealthOptions {
  failureThreshold: number;
  cooldownMs: number;
  now: () => number;
}

interface TargetState {
  consecutiveFailures: number;
  coolingUntil: number;
}

export class TargetHealth {
  private readonly states = new Map<string, TargetState>();
  constructor(private readonly options: HealthOptions) {}

  isUsable(label: string): boolean {
    const state = this.states.get(label);
    return state === undefined || state.coolingUntil <= this.options.now();
  }

  recordSuccess(label: string): void {
    this.states.delete(label);
  }

  recordFailure(label: string, severe = false): void {
    const state = this.states.get(label) ?? { consecutiveFailures: 0, coolingUntil: 0 };
    state.consecutiveFailures += 1;
    if (severe || state.consecutiveFailures >= this.options.failureThreshold) {
      state.coolingUntil = this.options.now() + this.options.cooldownMs;
      state.consecutiveFailures = 0;
    }
    this.states.set(label, state);
  }
}
