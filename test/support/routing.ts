/**
 * Real providers for the router's own tests: the simulated provider, and a small provider that
 * speaks the Provider interface and can be told to fail, to pass a body through, or to answer a
 * pass-through in the wrong form. Plus the catalog entries and route requests those tests open.
 */
import type { SimulatedProviderConfig } from '../../src/config/schema.js';
import { SURFACES, type CanonicalEvent, type CanonicalRequest, type Surface } from '../../src/protocol/canonical.js';
import { UpstreamError, type PassthroughCall, type PassthroughResult, type Provider, type ProviderCall } from '../../src/providers/provider.js';
import { framesOf } from './passthrough-frames.js';
import { createSimulatedProvider } from '../../src/providers/simulated/simulated-provider.js';
import type { ModelEntry, Target } from '../../src/routing/catalog.js';
import type { OpenedAnswer, RouteRequest, Router } from '../../src/routing/router.js';

export function simulated(name: string, failure: SimulatedProviderConfig['failure']['mode'] = 'none'): Provider {
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
export class ControlledProvider implements Provider {
  /** Thrown before the first event (or by `passthrough`) while set. */
  failure: UpstreamError | undefined;
  /** Answers a pass-through in the other form than asked (JSON to a stream request, or the reverse). */
  wrongForm = false;
  /** Set when a consumer ended a passed-through stream (which releases the upstream's body). */
  streamReleased = false;
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
        const body = { ...call.body, answered_by: this.name };
        const events: CanonicalEvent[] = [{ type: 'response-start', upstreamModel: call.upstreamModel }];
        const frames = framesOf([{ sse: `data: ${JSON.stringify(body)}\n\n`, events }], () => (this.streamReleased = true));
        return call.stream !== this.wrongForm ? { kind: 'stream', frames } : { kind: 'json', body, events };
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

export function target(provider: Provider, options: { model?: string; priority?: number; weight?: number } = {}): Target {
  const upstreamModel = options.model ?? 'upstream-model';
  return { provider, upstreamModel, priority: options.priority ?? 0, weight: options.weight ?? 1, label: `${provider.name}/${upstreamModel}` };
}

export function model(targets: Target[], id = 'model-5.6'): ModelEntry {
  return { id, enabled: true, endpoints: new Set(SURFACES), reasoningEfforts: new Set(), maxOutputTokens: 4_096, hostedTools: 'drop', targets };
}

export const BODY = { model: 'model-5.6', messages: [{ role: 'user', content: 'Hello there' }], temperature: 0.3 };

export function route(entry: ModelEntry, overrides: Partial<RouteRequest> = {}): RouteRequest {
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
export async function servedBy(router: Router, request: RouteRequest): Promise<string> {
  const opened = await router.open(request);
  await release(opened);
  return opened.target.label;
}

export async function release(opened: OpenedAnswer): Promise<void> {
  if (opened.kind === 'events') opened.rest.release();
  await Promise.resolve();
}

/** The events after `response-start` of an answer opened canonically, read until its body is over. */
export function restOf(opened: Extract<OpenedAnswer, { kind: 'events' }>): Promise<CanonicalEvent[]> {
  return new Promise((resolve) => {
    const collected: CanonicalEvent[] = [];
    opened.rest.start({ events: (events) => void collected.push(...events), closed: () => resolve(collected) });
  });
}

export const unavailable = () => new UpstreamError('status', 'upstream answered 503', { status: 503 });
export const refusedCredentials = () => new UpstreamError('credentials', 'upstream refused the gateway key', { status: 401 });
