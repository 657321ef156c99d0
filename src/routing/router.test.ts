/**
 * The router on its own, driven with real providers (test/support/routing.ts): priority, weights
 * over a seeded random, cool-down and recovery on a clock the test moves, credentials taking a
 * whole provider out, failover before the first event. Pass-through: router-passthrough.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../protocol/canonical.js';
import { UpstreamError, type Provider } from '../providers/provider.js';
import { createRandom } from '../providers/simulated/deterministic-random.js';
import { ControlledProvider, model, refusedCredentials, restOf, route, servedBy, simulated, target, unavailable } from '../../test/support/routing.js';
import { NoTargetAvailableError, Router, type HealthChange } from './router.js';

describe('priority', () => {
  it('tries the lowest priority first, whatever the random draw', () => {
    const first = target(simulated('first'), { priority: 1 });
    const second = target(simulated('second'), { priority: 2 });
    const third = target(simulated('third'), { priority: 7 });
    const entry = model([third, first, second]);
    const random = createRandom(11);
    const router = new Router({ random });
    for (let draw = 0; draw < 200; draw++) {
      expect(router.orderedTargets(entry).map((each) => each.label)).toEqual([first.label, second.label, third.label]);
    }
  });

  it('goes to the next priority only when every target of the lower one failed', async () => {
    const primaryA = new ControlledProvider('primary-a');
    const primaryB = new ControlledProvider('primary-b');
    const backup = new ControlledProvider('backup');
    const entry = model([target(backup, { priority: 5 }), target(primaryA, { priority: 0 }), target(primaryB, { priority: 0 })]);
    const router = new Router({ random: createRandom(3) });

    expect(await servedBy(router, route(entry))).toMatch(/^primary-/);
    expect(backup.streamCalls).toBe(0);

    primaryA.failure = unavailable();
    primaryB.failure = unavailable();
    expect(await servedBy(router, route(entry))).toBe('backup/upstream-model');
    // Both of priority 0 were tried (one of them served the first request, too).
    expect(primaryA.streamCalls).toBeGreaterThanOrEqual(1);
    expect(primaryB.streamCalls).toBeGreaterThanOrEqual(1);
    expect(primaryA.streamCalls + primaryB.streamCalls).toBe(3);
    expect(backup.streamCalls).toBe(1);
  });
});

describe('weights', () => {
  it('splits traffic 3:1 within a priority (seeded, 4,000 requests)', async () => {
    const heavy = target(simulated('heavy'), { weight: 3 });
    const light = target(simulated('light'), { weight: 1 });
    const entry = model([light, heavy]);
    const router = new Router({ random: createRandom(20_261_123) });
    const counts = new Map<string, number>();
    for (let index = 0; index < 4_000; index++) {
      const label = await servedBy(router, route(entry));
      counts.set(label, (counts.get(label) ?? 0) + 1);
    }
    const heavyShare = (counts.get(heavy.label) ?? 0) / 4_000;
    expect(heavyShare).toBeGreaterThan(0.72);
    expect(heavyShare).toBeLessThan(0.78);
    expect((counts.get(heavy.label) ?? 0) + (counts.get(light.label) ?? 0)).toBe(4_000);
  });

  it('keeps every target of a priority in the order, the first drawn by weight', () => {
    const entry = model([target(simulated('a'), { weight: 1 }), target(simulated('b'), { weight: 1 }), target(simulated('c'), { weight: 2 })]);
    const router = new Router({ random: createRandom(5) });
    const firsts = new Map<string, number>();
    for (let index = 0; index < 4_000; index++) {
      const order = router.orderedTargets(entry).map((each) => each.label);
      expect([...order].sort()).toEqual(['a/upstream-model', 'b/upstream-model', 'c/upstream-model']);
      firsts.set(order[0]!, (firsts.get(order[0]!) ?? 0) + 1);
    }
    // Weights 1:1:2: c first half the time, a and b a quarter each.
    expect((firsts.get('c/upstream-model') ?? 0) / 4_000).toBeCloseTo(0.5, 1);
    expect((firsts.get('a/upstream-model') ?? 0) / 4_000).toBeCloseTo(0.25, 1);
  });
});

describe('cool-down and recovery', () => {
  function setUp() {
    let clock = 1_000_000;
    const flaky = new ControlledProvider('flaky');
    const steady = new ControlledProvider('steady');
    const entry = model([target(flaky, { priority: 0 }), target(steady, { priority: 1 })]);
    const failures: string[] = [];
    const router = new Router({
      failureThreshold: 3,
      cooldownMs: 30_000,
      now: () => clock,
      onTargetFailure: (failed, error) => failures.push(`${failed.label}: ${error.kind}`),
    });
    return { flaky, steady, entry, router, failures, advance: (ms: number) => (clock += ms) };
  }

  it('skips a target after three failures in a row until its cool-down ends, then uses it again', async () => {
    const { flaky, steady, entry, router, failures, advance } = setUp();
    flaky.failure = unavailable();
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await servedBy(router, route(entry))).toBe('steady/upstream-model');
      expect(flaky.streamCalls).toBe(attempt);
    }
    expect(failures).toEqual(Array.from({ length: 3 }, () => 'flaky/upstream-model: status'));

    // Cooling: not even tried.
    expect(router.orderedTargets(entry).map((each) => each.label)).toEqual(['steady/upstream-model']);
    expect(await servedBy(router, route(entry))).toBe('steady/upstream-model');
    expect(flaky.streamCalls).toBe(3);

    advance(29_999);
    expect(await servedBy(router, route(entry))).toBe('steady/upstream-model');
    expect(flaky.streamCalls).toBe(3);

    // The cool-down is over and the upstream is back: it serves again, first in line.
    advance(1);
    flaky.failure = undefined;
    expect(await servedBy(router, route(entry))).toBe('flaky/upstream-model');
    expect(flaky.streamCalls).toBe(4);
    expect(steady.streamCalls).toBe(5);
  });

  it('a target still failing after its cool-down is tried once and cools down again', async () => {
    const { flaky, entry, router, advance } = setUp();
    flaky.failure = unavailable();
    for (let attempt = 0; attempt < 3; attempt++) await servedBy(router, route(entry));
    advance(30_000);
    await servedBy(router, route(entry));
    expect(flaky.streamCalls).toBe(4);
    // Below the threshold again: two more failures before it cools.
    await servedBy(router, route(entry));
    await servedBy(router, route(entry));
    expect(flaky.streamCalls).toBe(6);
    await servedBy(router, route(entry));
    expect(flaky.streamCalls).toBe(6);
  });

  it('one success resets the count of failures in a row', async () => {
    const { flaky, entry, router } = setUp();
    flaky.failure = unavailable();
    await servedBy(router, route(entry));
    await servedBy(router, route(entry));
    flaky.failure = undefined;
    expect(await servedBy(router, route(entry))).toBe('flaky/upstream-model');
    flaky.failure = unavailable();
    await servedBy(router, route(entry));
    await servedBy(router, route(entry));
    // Four failures in all, but never three in a row: still tried.
    await servedBy(router, route(entry));
    expect(flaky.streamCalls).toBe(6);
  });

  it('a request the upstream refuses for its content is not failed over and cools nothing', async () => {
    const { flaky, steady, entry, router } = setUp();
    flaky.failure = new UpstreamError('status', 'bad request', { status: 400, clientMessage: 'messages: too long' });
    for (let attempt = 0; attempt < 4; attempt++) {
      await expect(router.open(route(entry))).rejects.toMatchObject({ name: 'UpstreamError', status: 400 });
    }
    expect(flaky.streamCalls).toBe(4);
    expect(steady.streamCalls).toBe(0);
    expect(router.orderedTargets(entry)).toHaveLength(2);
  });

  it('with every target cooling, no target is usable and opening names what failed', async () => {
    const { flaky, steady, entry, router, advance } = setUp();
    flaky.failure = unavailable();
    steady.failure = unavailable();
    const opened = [];
    for (let attempt = 0; attempt < 3; attempt++) opened.push(await router.open(route(entry)).catch((error: unknown) => error));
    expect(opened.every((error) => error instanceof NoTargetAvailableError && error.failures.length === 2)).toBe(true);
    expect(router.hasUsableTarget(entry)).toBe(false);
    const cooling = await router.open(route(entry)).catch((error: unknown) => error);
    expect(cooling).toBeInstanceOf(NoTargetAvailableError);
    expect((cooling as NoTargetAvailableError).failures).toEqual([]);
    expect(flaky.streamCalls + steady.streamCalls).toBe(6);
    advance(30_000);
    expect(router.hasUsableTarget(entry)).toBe(true);
  });
});

describe('health changes and live health', () => {
  it('reports a target down once per outage and up when it answers again, with its health at each step', async () => {
    let clock = 1_000_000;
    const flaky = new ControlledProvider('flaky');
    const steady = new ControlledProvider('steady');
    const entry = model([target(flaky, { priority: 0 }), target(steady, { priority: 1 })]);
    const changes: HealthChange[] = [];
    const router = new Router({ failureThreshold: 2, cooldownMs: 30_000, now: () => clock, onHealthChange: (change) => changes.push(change) });
    const [flakyTarget] = entry.targets;
    if (flakyTarget === undefined) throw new Error('no target');
    expect(router.health(flakyTarget)).toEqual({ status: 'healthy', coolingUntil: null, cause: null, consecutiveFailures: 0 });

    flaky.failure = unavailable();
    await servedBy(router, route(entry));
    expect(changes).toEqual([]);
    expect(router.health(flakyTarget)).toMatchObject({ status: 'healthy', consecutiveFailures: 1 });
    await servedBy(router, route(entry));
    expect(changes).toEqual([
      { transition: 'down', scope: 'target', provider: 'flaky', upstreamModel: 'upstream-model', label: 'flaky/upstream-model', coolingUntil: 1_030_000, failure: { kind: 'status', status: 503 } },
    ]);
    expect(router.health(flakyTarget)).toEqual({ status: 'cooling_down', coolingUntil: 1_030_000, cause: 'failures', consecutiveFailures: 0 });

    // Back in rotation after the cool-down, failing again: cooled again, but still the same outage.
    clock += 30_000;
    expect(router.health(flakyTarget).status).toBe('recovering');
    await servedBy(router, route(entry));
    await servedBy(router, route(entry));
    expect(changes).toHaveLength(1);

    clock += 30_000;
    flaky.failure = undefined;
    expect(await servedBy(router, route(entry))).toBe('flaky/upstream-model');
    expect(changes.slice(1)).toEqual([{ transition: 'up', scope: 'target', provider: 'flaky', upstreamModel: 'upstream-model', label: 'flaky/upstream-model' }]);
    expect(router.health(flakyTarget).status).toBe('healthy');
  });

  it('reports a provider whose credentials were refused down as a whole, and up with its next answer', async () => {
    let clock = 0;
    const shared = new ControlledProvider('shared');
    const entry = model([target(shared, { model: 'chat-model' })], 'model-chat');
    const changes: HealthChange[] = [];
    const router = new Router({ failureThreshold: 3, cooldownMs: 30_000, now: () => clock, onHealthChange: (change) => changes.push(change) });
    shared.failure = refusedCredentials();
    await expect(router.open(route(entry))).rejects.toBeInstanceOf(NoTargetAvailableError);
    expect(changes).toEqual([{ transition: 'down', scope: 'provider', provider: 'shared', label: 'shared', coolingUntil: 30_000, failure: { kind: 'credentials', status: 401 } }]);
    expect(router.health(entry.targets[0]!)).toEqual({ status: 'cooling_down', coolingUntil: 30_000, cause: 'credentials', consecutiveFailures: 0 });
    clock += 30_000;
    shared.failure = undefined;
    expect(await servedBy(router, route(entry))).toBe('shared/chat-model');
    expect(changes.slice(1)).toEqual([{ transition: 'up', scope: 'provider', provider: 'shared', label: 'shared' }]);
  });
});

describe('credentials refused', () => {
  it('takes the whole provider out at once, for every model it serves, until the cool-down ends', async () => {
    let clock = 0;
    const shared = new ControlledProvider('shared');
    const other = new ControlledProvider('other');
    const chat = model([target(shared, { model: 'chat-model', priority: 0 }), target(other, { priority: 1 })], 'model-chat');
    const coder = model([target(shared, { model: 'code-model' })], 'model-code');
    const router = new Router({ failureThreshold: 3, cooldownMs: 30_000, now: () => clock });

    shared.failure = refusedCredentials();
    expect(await servedBy(router, route(chat))).toBe('other/upstream-model');
    // One refusal was enough, and the other model on the same provider is out too.
    expect(router.hasUsableTarget(coder)).toBe(false);
    await expect(router.open(route(coder))).rejects.toBeInstanceOf(NoTargetAvailableError);
    expect(await servedBy(router, route(chat))).toBe('other/upstream-model');
    expect(shared.streamCalls).toBe(1);

    clock += 30_000;
    shared.failure = undefined;
    expect(await servedBy(router, route(coder))).toBe('shared/code-model');
    expect(await servedBy(router, route(chat))).toBe('shared/chat-model');
  });

  it('an ordinary failure cools only its own target, not the provider', async () => {
    const shared = new ControlledProvider('shared');
    const chat = model([target(shared, { model: 'chat-model' })], 'model-chat');
    const coder = model([target(shared, { model: 'code-model' })], 'model-code');
    const router = new Router({ failureThreshold: 1, cooldownMs: 30_000, now: () => 0 });
    shared.failure = unavailable();
    await expect(router.open(route(chat))).rejects.toBeInstanceOf(NoTargetAvailableError);
    expect(router.hasUsableTarget(chat)).toBe(false);
    expect(router.hasUsableTarget(coder)).toBe(true);
  });
});

describe('failover before the first event', () => {
  it('fails over when a target fails before answering, and keeps a stream that fails after it', async () => {
    const entry = model([target(simulated('broken', 'before_first_byte'), { priority: 0 }), target(simulated('cut', 'mid_stream'), { priority: 1 })]);
    const opened = await new Router().open(route(entry));
    expect(opened.target.label).toBe('cut/upstream-model');
    expect(opened.kind).toBe('events');
    if (opened.kind !== 'events') return;
    const rest = await restOf(opened);
    expect(rest.at(-1)).toMatchObject({ type: 'error' });
  });

  it('tries no other target once the client has gone away', async () => {
    const abort = new AbortController();
    // The client leaves while the first target is failing: that failure is not the target's.
    const leaving: Provider = {
      name: 'leaving',
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next: async (): Promise<IteratorResult<CanonicalEvent>> => {
            abort.abort();
            throw unavailable();
          },
        }),
      }),
    };
    const second = new ControlledProvider('second');
    const entry = model([target(leaving, { priority: 0 }), target(second, { priority: 1 })]);
    const router = new Router({ failureThreshold: 1 });
    await expect(router.open(route(entry, { signal: abort.signal }))).rejects.toMatchObject({ name: 'UpstreamError', status: 503 });
    expect(second.streamCalls).toBe(0);
    expect(router.orderedTargets(entry)).toHaveLength(2);
  });

  it('tries nothing for a client already gone', async () => {
    const abort = new AbortController();
    abort.abort();
    const only = new ControlledProvider('only');
    await expect(new Router().open(route(model([target(only)]), { signal: abort.signal }))).rejects.toBeInstanceOf(NoTargetAvailableError);
    expect(only.streamCalls).toBe(0);
  });
});

describe('attempt observer', () => {
  it('is told of each attempt: the failed ones with their failure, the one committed to as opened, a client gone as aborted', async () => {
    const seen: string[] = [];
    const observeAttempt = (attempted: { label: string }) => ({
      opened: () => seen.push(`${attempted.label}: opened`),
      failed: (reason: UpstreamError | 'aborted') => seen.push(`${attempted.label}: ${reason === 'aborted' ? 'aborted' : `${reason.kind} ${reason.status ?? ''}`.trim()}`),
    });
    const entry = model([target(simulated('broken', 'before_first_byte'), { priority: 0 }), target(simulated('fine'), { priority: 1 })]);
    await new Router({ observeAttempt }).open(route(entry));
    expect(seen).toEqual(['broken/upstream-model: status 500', 'fine/upstream-model: opened']);

    seen.length = 0;
    const abort = new AbortController();
    const leaving: Provider = {
      name: 'leaving',
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next: async (): Promise<IteratorResult<CanonicalEvent>> => {
            abort.abort();
            throw unavailable();
          },
        }),
      }),
    };
    await expect(new Router({ observeAttempt }).open(route(model([target(leaving)]), { signal: abort.signal }))).rejects.toBeInstanceOf(UpstreamError);
    expect(seen).toEqual(['leaving/upstream-model: aborted']);
  });
});
