/** Target health with a clock the test moves: thresholds, severe failures, resets and the cool-down's end. */
import { describe, expect, it } from 'vitest';
import { TargetHealth } from './target-health.js';

function health() {
  let clock = 5_000;
  const tracker = new TargetHealth({ failureThreshold: 3, cooldownMs: 1_000, now: () => clock });
  return { tracker, advance: (ms: number) => (clock += ms) };
}

describe('TargetHealth', () => {
  it('knows nothing bad of a target it has not seen', () => {
    expect(health().tracker.isUsable('never/seen')).toBe(true);
  });

  it('cools a target down on its third failure in a row, for exactly the cool-down', () => {
    const { tracker, advance } = health();
    tracker.recordFailure('a/m');
    tracker.recordFailure('a/m');
    expect(tracker.isUsable('a/m')).toBe(true);
    tracker.recordFailure('a/m');
    expect(tracker.isUsable('a/m')).toBe(false);
    expect(tracker.isUsable('b/m')).toBe(true);
    advance(999);
    expect(tracker.isUsable('a/m')).toBe(false);
    advance(1);
    expect(tracker.isUsable('a/m')).toBe(true);
  });

  it('starts counting again after a cool-down', () => {
    const { tracker, advance } = health();
    for (let index = 0; index < 3; index++) tracker.recordFailure('a/m');
    advance(1_000);
    tracker.recordFailure('a/m');
    tracker.recordFailure('a/m');
    expect(tracker.isUsable('a/m')).toBe(true);
    tracker.recordFailure('a/m');
    expect(tracker.isUsable('a/m')).toBe(false);
  });

  it('cools down at once on a severe failure', () => {
    const { tracker } = health();
    tracker.recordFailure('provider:a', true);
    expect(tracker.isUsable('provider:a')).toBe(false);
  });

  it('forgets failures on a success', () => {
    const { tracker } = health();
    tracker.recordFailure('a/m');
    tracker.recordFailure('a/m');
    tracker.recordSuccess('a/m');
    tracker.recordFailure('a/m');
    tracker.recordFailure('a/m');
    expect(tracker.isUsable('a/m')).toBe(true);
  });

  it('reports down once per outage, even across several cool-downs, and up on the next success', () => {
    const { tracker, advance } = health();
    expect(tracker.recordFailure('a/m')).toBeUndefined();
    expect(tracker.recordFailure('a/m')).toBeUndefined();
    expect(tracker.recordFailure('a/m')).toBe('down');
    expect(tracker.status('a/m')).toEqual({ coolingUntil: 6_000, consecutiveFailures: 0, down: true });
    advance(1_000);
    // Usable again to be tried, but still down until it answers.
    expect(tracker.status('a/m')).toEqual({ coolingUntil: null, consecutiveFailures: 0, down: true });
    for (let index = 0; index < 2; index++) expect(tracker.recordFailure('a/m')).toBeUndefined();
    expect(tracker.recordFailure('a/m')).toBeUndefined();
    expect(tracker.isUsable('a/m')).toBe(false);
    advance(1_000);
    expect(tracker.recordSuccess('a/m')).toBe('up');
    expect(tracker.status('a/m')).toEqual({ coolingUntil: null, consecutiveFailures: 0, down: false });
    expect(tracker.recordSuccess('a/m')).toBeUndefined();
  });

  it('reports no transition for failures below the threshold, nor for the success that clears them', () => {
    const { tracker } = health();
    expect(tracker.recordFailure('a/m')).toBeUndefined();
    expect(tracker.status('a/m')).toEqual({ coolingUntil: null, consecutiveFailures: 1, down: false });
    expect(tracker.recordSuccess('a/m')).toBeUndefined();
    expect(tracker.recordFailure('provider:a', true)).toBe('down');
    expect(tracker.recordSuccess('provider:a')).toBe('up');
  });
});
