/**
 * The router on its own, driven with real providers: the simulated provider, and small providers
 * written here that speak the Provider interface and can be told to fail (or to pass a body
 * through). Randomness and the clock go in through the router's `random` and `now` options, so the
 * weighted choice is seeded and cool-downs end when the test says.
 */
import { describe, expect, it } from 'vitest';
import type { SimulatedProviderConfig } from '../config/schema.js';
import type { CanonicalEvent, CanonicalRequest, Surface } from '../protocol/canonical.js';
import { UpstreamError, type PassthroughCall, type PassthroughResult, type Provider, type ProviderCall } from '../providers/provider.js';
import { createRandom } from '../providers/simulated/deterministic-random.js';
import { createSimulatedProvider } from '../providers/simulated/simulated-provider.js';
import type { ModelEntry, Target } from './catalog.js';
import { NoTargetAvailableError, Router, type OpenedAnswer, type RouteRequest } from './router.js';

function simulated(name: string, failure: SimulatedProviderConfig['failure']['mode'] = 'none'): Provider {
  return createSimulatedProvider({
    name,
    type: 'simulated',
    pace_ms: 0,
    failure: { mode: failure, after_chunks: 2 },
    timeouts: { connect_ms: 5_000, first_byte_ms: 60_000, idle_ms: 60_000 },
  });
}

/**
 * A provider that answers like the simulated one until told to fail, and that may speak some
 * surfaces natively (then it passes the body through and answers with it).
 */
class ControlledProvider implements Provider {
  /** Thrown before the first event (or by `passthrough`) while set. */
  failure: UpstreamError | undefined;
  streamCalls = 0;
  readonly passthroughCalls: PassthroughCall[] = [];
  readonly passthrough?: (call: PassthroughCall) => Promise<PassthroughResult>;
  readonly speaksNatively?: (surface: Surface) => boolean;
  private readonly inner: Provider;

  constructor(
    readonly name: string,
    native: readonly Surface[] = [],
  ) {
    this.inner = simulated(name);
    if (native.length > 0) {
      this.speaksNatively = (surface) => native.includes(surface);
      this.passthrough = async (call) => {
        this.passthroughCalls.push(call);
        if (this.failure !== undefined) throw this.failure;
        return { kind: 'json', body: { ...call.body, answered_by: this.name }, events: [{ type: 'response-start', upstreamModel: call.upstreamModel }] };
      };
    }
  }

  stream(request: CanonicalRequest, call: ProviderCall): AsyncIterable<CanonicalEvent> {
    this.streamCalls += 1;
    const failure = this.failure;
    const inner = this.inner;
    return (async function* () {
      if (failure !== undefined) throw failure;
      yield* inner.stream(request, call);
    })();
  }
}

function target(provider: Provider, options: { model?: string; priority?: number; weight?: number } = {}): Target {
  const upstreamModel = options.model ?? 'upstream-model';
  return { provider, upstreamModel, priority: options.priority ?? 0, weight: options.weight ?? 1, label: `${provider.name}/${upstreamModel}` };
}

function model(targets: Target[], id = 'model-5.6'): ModelEntry {
  return { id, enabled: true, reasoningEfforts: new Set(), maxOutputTokens: 4_096, hostedTools: 'drop', targets };
}

const BODY = { model: 'model-5.6', messages: [{ role: 'user', content: 'Hello there' }], temperature: 0.3 };

function route(entry: ModelEntry, overrides: Partial<RouteRequest> = {}): RouteRequest {
  return {
    model: entry,
    surface: 'chat-completions',
    request: { model: entry.id, input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hello there' }] }], tools: [], toolChoice: 'auto', stream: true },
    body: BODY,
    clientWantsUsage: false,
    maxOutputTokens: 256,
    signal: new AbortController().signal,
    requestId: 'req_router_test',
    ...overrides,
  };
}

/** Opens an answer, releases it (as the answer path would once done), and says who served it. */
async function servedBy(router: Router, request: RouteRequest): Promise<string> {
  const opened = await router.open(request);
  await release(opened);
  return opened.target.label;
}

async function release(opened: OpenedAnswer): Promise<void> {
  if (opened.kind === 'events') await opened.rest.return?.();
}

const unavailable = () => new UpstreamError('status', 'upstream answered 503', { status: 503 });
const refusedCredentials = () => new UpstreamError('credentials', 'upstream refused the gateway key', { status: 401 });

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

describe('pass-through or canonical', () => {
  it('passes the body through when the target speaks the surface natively', async () => {
    const native = new ControlledProvider('native', ['chat-completions']);
    const entry = model([target(native, { model: 'native-model' })]);
    const opened = await new Router().open(route(entry, { clientWantsUsage: true, upstreamHeaders: { 'x-extra': 'kept' } }));
    expect(opened.kind).toBe('passthrough');
    if (opened.kind !== 'passthrough') return;
    expect(opened.result).toMatchObject({ kind: 'json', body: { ...BODY, answered_by: 'native' } });
    expect(native.streamCalls).toBe(0);
    expect(native.passthroughCalls).toHaveLength(1);
    expect(native.passthroughCalls[0]).toMatchObject({
      surface: 'chat-completions',
      body: BODY,
      stream: true,
      clientWantsUsage: true,
      upstreamModel: 'native-model',
      maxOutputTokens: 256,
      requestId: 'req_router_test',
      headers: { 'x-extra': 'kept' },
    });
  });

  it('goes canonical when the request is canonical-only, even on a native target', async () => {
    const native = new ControlledProvider('native', ['chat-completions']);
    const opened = await new Router().open(route(model([target(native)]), { canonicalOnly: true }));
    expect(opened.kind).toBe('events');
    if (opened.kind === 'events') expect(opened.first).toEqual({ type: 'response-start', upstreamModel: 'upstream-model' });
    await release(opened);
    expect(native.passthroughCalls).toHaveLength(0);
    expect(native.streamCalls).toBe(1);
  });

  it('goes canonical when the target does not speak the client surface', async () => {
    const native = new ControlledProvider('native', ['chat-completions']);
    const opened = await new Router().open(route(model([target(native)]), { surface: 'responses' }));
    expect(opened.kind).toBe('events');
    await release(opened);
    expect(native.passthroughCalls).toHaveLength(0);
  });

  it('goes canonical on a provider without a pass-through path', async () => {
    const opened = await new Router().open(route(model([target(simulated('simulated'))])));
    expect(opened.kind).toBe('events');
    if (opened.kind === 'events') {
      const rest: CanonicalEvent[] = [];
      for (let next = await opened.rest.next(); next.done !== true; next = await opened.rest.next()) rest.push(next.value);
      expect(rest.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    }
  });

  it('fails a pass-through over to the next target, which may answer canonically', async () => {
    const native = new ControlledProvider('native', ['chat-completions']);
    native.failure = unavailable();
    const entry = model([target(native, { priority: 0 }), target(simulated('backup'), { priority: 1 })]);
    const opened = await new Router().open(route(entry));
    expect(opened.kind).toBe('events');
    expect(opened.target.label).toBe('backup/upstream-model');
    expect(native.passthroughCalls).toHaveLength(1);
    await release(opened);
  });
});

describe('failover before the first event', () => {
  it('fails over when a target fails before answering, and keeps a stream that fails after it', async () => {
    const entry = model([target(simulated('broken', 'before_first_byte'), { priority: 0 }), target(simulated('cut', 'mid_stream'), { priority: 1 })]);
    const opened = await new Router().open(route(entry));
    expect(opened.target.label).toBe('cut/upstream-model');
    expect(opened.kind).toBe('events');
    if (opened.kind !== 'events') return;
    const rest: CanonicalEvent[] = [];
    for (let next = await opened.rest.next(); next.done !== true; next = await opened.rest.next()) rest.push(next.value);
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
