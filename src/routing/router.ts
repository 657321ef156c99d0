/**
 * Picks targets for a model and opens the answer. The router waits for the upstream's 200 (from a
 * provider whose answer is an async iterable, for its first event) before committing to a target:
 * failures before that fail over to the next target; failures after it belong to the stream and
 * are not retried.
 */
import type { CanonicalEvent, CanonicalRequest, Surface } from '../protocol/canonical.js';
import { UpstreamError, type CanonicalEvents, type PassthroughResult } from '../providers/provider.js';
import { IteratedEvents } from '../providers/shared/canonical-events.js';
import type { ModelEntry, Target } from './catalog.js';
import { TargetHealth, type HealthOptions } from './target-health.js';

/** What every call through the router has: the model, the request it belongs to, whether it streams. */
export interface AttemptRoute {
  model: ModelEntry;
  /** Tollgate's request id. */
  requestId: string;
  stream: boolean;
  signal: AbortSignal;
  /** Told of each target that failed before answering (not of one the client's leaving cut short). */
  onTargetFailed?: (target: Target) => void;
}

/** `Stream` is the request's stream flag as a type, so that the answer is typed by it. */
export interface RouteRequest<Stream extends boolean = boolean> {
  model: ModelEntry;
  surface: Surface;
  request: CanonicalRequest & { readonly stream: Stream };
  /** The client's JSON body, for pass-through. */
  body: Readonly<Record<string, unknown>>;
  clientWantsUsage: boolean;
  maxOutputTokens: number;
  signal: AbortSignal;
  requestId: string;
  /**
   * Serve through the canonical path even where the provider could pass the body through: set
   * when the body means something only the gateway can resolve (a `previous_response_id` the
   * upstream never saw), so `request` (already expanded) is what must reach the upstream.
   */
  canonicalOnly?: boolean;
  /** Client headers a pass-through forwards (see PassthroughCall.headers). */
  upstreamHeaders?: Readonly<Record<string, string>>;
  /** A pass-through goes to this endpoint of the surface (see PassthroughCall.endpoint). */
  passthroughEndpoint?: 'compact';
  /** Told of each target that failed before answering (not of one the client's leaving cut short). */
  onTargetFailed?: (target: Target) => void;
}

/**
 * An answer opened on a target: canonical events (`first` is `response-start`; `rest` read in one
 * loop), or a pass-through typed by the request's stream flag.
 */
export type OpenedAnswer<Stream extends boolean = boolean> =
  | { kind: 'events'; target: Target; first: CanonicalEvent; rest: CanonicalEvents }
  | { kind: 'passthrough'; target: Target; result: PassthroughResult<Stream> };

/** Every target failed (or none was usable) before producing anything. */
export class NoTargetAvailableError extends Error {
  readonly failures: readonly UpstreamError[];
  constructor(model: string, failures: readonly UpstreamError[]) {
    super(`no usable target for ${model}${failures.length > 0 ? `: ${failures.map((failure) => failure.message).join('; ')}` : ''}`);
    this.name = 'NoTargetAvailableError';
    this.failures = failures;
  }
}

function providerHealthLabel(target: Target): string {
  return `provider:${target.provider.name}`;
}

/**
 * A target taken out of rotation or back, as this process saw it (health is per process). A
 * provider whose credentials were refused is taken out whole (`scope: provider`).
 */
export interface HealthChange {
  transition: 'down' | 'up';
  scope: 'target' | 'provider';
  provider: string;
  /** The target's upstream model; absent for a whole provider. */
  upstreamModel?: string;
  /** `provider/model`, or the provider's name. */
  label: string;
  /** With `down`: skipped until then (ms since epoch). */
  coolingUntil?: number;
  /** With `down`: the kind of failure that took it out, and the upstream's status if it answered. */
  failure?: { kind: UpstreamError['kind']; status: number | null };
}

/** A target's live health in this process: its own and its provider's. */
export interface TargetHealthView {
  /** `recovering`: its cool-down is over and it is tried again, but it has not answered since. */
  status: 'healthy' | 'cooling_down' | 'recovering';
  /** With `cooling_down`: until when (ms since epoch). */
  coolingUntil: number | null;
  /** With `cooling_down`: `credentials` when its provider refused our key, else `failures`. */
  cause: 'failures' | 'credentials' | null;
  consecutiveFailures: number;
}

/** How one attempt on a target ended: it opened (the router committed to it) or failed. */
export interface AttemptEnd {
  opened(): void;
  /** `aborted`: the client went away during the attempt. */
  failed(reason: UpstreamError | 'aborted'): void;
}

/**
 * Told about each attempt on a target as it starts (tracing: one child span per upstream call).
 * Optional, so that the request path pays nothing when nobody watches.
 */
export type AttemptObserver = (target: Target, route: AttemptRoute) => AttemptEnd;

export interface RouterOptions extends Partial<HealthOptions> {
  random?: () => number;
  /** Told about every target failure, for the operator's log. */
  onTargetFailure?: (target: Target, error: UpstreamError, requestId: string) => void;
  /** Told when a target or provider goes down or comes back; must return at once (request path). */
  onHealthChange?: (change: HealthChange) => void;
  observeAttempt?: AttemptObserver;
}

export class Router {
  private readonly targetHealth: TargetHealth;
  private readonly random: () => number;
  private readonly onTargetFailure: NonNullable<RouterOptions['onTargetFailure']>;
  private readonly onHealthChange: NonNullable<RouterOptions['onHealthChange']>;
  private readonly observeAttempt: AttemptObserver | undefined;

  constructor(options: RouterOptions = {}) {
    this.targetHealth = new TargetHealth({
      failureThreshold: options.failureThreshold ?? 3,
      cooldownMs: options.cooldownMs ?? 30_000,
      now: options.now ?? Date.now,
    });
    this.random = options.random ?? Math.random;
    this.onTargetFailure = options.onTargetFailure ?? (() => {});
    this.onHealthChange = options.onHealthChange ?? (() => {});
    this.observeAttempt = options.observeAttempt;
  }

  /** The target's health as this process sees it (for the admin catalog). */
  health(target: Target): TargetHealthView {
    const own = this.targetHealth.status(target.label);
    const provider = this.targetHealth.status(providerHealthLabel(target));
    const consecutiveFailures = own.consecutiveFailures;
    if (provider.coolingUntil !== null) return { status: 'cooling_down', coolingUntil: Math.max(provider.coolingUntil, own.coolingUntil ?? 0), cause: 'credentials', consecutiveFailures };
    if (own.coolingUntil !== null) return { status: 'cooling_down', coolingUntil: own.coolingUntil, cause: 'failures', consecutiveFailures };
    return { status: own.down || provider.down ? 'recovering' : 'healthy', coolingUntil: null, cause: null, consecutiveFailures };
  }

  /** Targets not cooling down, in the order they will be tried. */
  orderedTargets(model: ModelEntry): Target[] {
    const usable = model.targets.filter((target) => this.isUsable(target));
    const byPriority = new Map<number, Target[]>();
    for (const target of usable) byPriority.set(target.priority, [...(byPriority.get(target.priority) ?? []), target]);
    return [...byPriority.keys()].sort((a, b) => a - b).flatMap((priority) => this.weightedShuffle(byPriority.get(priority) ?? []));
  }

  hasUsableTarget(model: ModelEntry): boolean {
    return model.targets.some((target) => this.isUsable(target));
  }

  /** A target cools down alone; refused credentials cool down its whole provider (every model). */
  private isUsable(target: Target): boolean {
    return this.targetHealth.isUsable(target.label) && this.targetHealth.isUsable(providerHealthLabel(target));
  }

  async open<Stream extends boolean>(route: RouteRequest<Stream>): Promise<OpenedAnswer<Stream>> {
    const attempt: AttemptRoute = { ...route, stream: route.request.stream };
    return (await this.attempt(attempt, this.orderedTargets(route.model), (target) => this.openTarget(target, route))).result;
  }

  /**
   * Calls `call` on each usable target of the model that `serves` (all of them by default), in
   * order, until one answers: failures before that fail over to the next target, and the first
   * answer commits to its target. What the generative surfaces' `open` does, for any call.
   */
  async call<T>(route: AttemptRoute, call: (target: Target) => Promise<T>, serves: (target: Target) => boolean = () => true): Promise<{ target: Target; result: T }> {
    return this.attempt(route, this.orderedTargets(route.model).filter(serves), call);
  }

  private async attempt<T>(route: AttemptRoute, targets: readonly Target[], call: (target: Target) => Promise<T>): Promise<{ target: Target; result: T }> {
    const failures: UpstreamError[] = [];
    for (const target of targets) {
      if (route.signal.aborted) break;
      const attempt = this.observeAttempt?.(target, route);
      try {
        const result = await call(target);
        this.recordSuccess(target);
        attempt?.opened();
        return { target, result };
      } catch (error) {
        // The client went away: not the target's fault, and no other target should be tried.
        if (route.signal.aborted) {
          attempt?.failed('aborted');
          throw error;
        }
        const failure = error instanceof UpstreamError ? error : new UpstreamError('protocol', `target failed: ${String(error)}`, { cause: error });
        attempt?.failed(failure);
        route.onTargetFailed?.(target);
        this.onTargetFailure(target, failure, route.requestId);
        // A request the upstream refused for its own content would be refused everywhere.
        if (!failure.failoverable) throw failure;
        this.recordFailure(target, failure);
        failures.push(failure);
      }
    }
    throw new NoTargetAvailableError(route.model.id, failures);
  }

  private recordSuccess(target: Target): void {
    if (this.targetHealth.recordSuccess(target.label) === 'up') this.onHealthChange(targetChange(target, 'up'));
    const provider = providerHealthLabel(target);
    if (this.targetHealth.recordSuccess(provider) === 'up') this.onHealthChange({ transition: 'up', scope: 'provider', provider: target.provider.name, label: target.provider.name });
  }

  private recordFailure(target: Target, failure: UpstreamError): void {
    const credentials = failure.kind === 'credentials';
    const label = credentials ? providerHealthLabel(target) : target.label;
    if (this.targetHealth.recordFailure(label, credentials) !== 'down') return;
    const coolingUntil = this.targetHealth.status(label).coolingUntil ?? undefined;
    const down = credentials
      ? { transition: 'down' as const, scope: 'provider' as const, provider: target.provider.name, label: target.provider.name }
      : targetChange(target, 'down');
    this.onHealthChange({ ...down, ...(coolingUntil === undefined ? {} : { coolingUntil }), failure: { kind: failure.kind, status: failure.status ?? null } });
  }

  private async openTarget<Stream extends boolean>(target: Target, route: RouteRequest<Stream>): Promise<OpenedAnswer<Stream>> {
    const call = {
      upstreamModel: target.upstreamModel,
      maxOutputTokens: route.maxOutputTokens,
      signal: route.signal,
      requestId: route.requestId,
    };
    const provider = target.provider;
    if (route.canonicalOnly !== true && provider.passthrough !== undefined && provider.speaksNatively?.(route.surface) === true) {
      const result = await provider.passthrough({
        ...call,
        surface: route.surface,
        body: route.body,
        stream: route.request.stream,
        clientWantsUsage: route.clientWantsUsage,
        ...(route.upstreamHeaders === undefined ? {} : { headers: route.upstreamHeaders }),
        ...(route.passthroughEndpoint === undefined ? {} : { endpoint: route.passthroughEndpoint }),
      });
      if (!answersAsAsked(result, route.request.stream)) {
        if (result.kind === 'stream') result.frames.release();
        throw new UpstreamError('protocol', `${target.label} answered a ${route.request.stream ? 'stream' : 'non-stream'} request with ${result.kind === 'stream' ? 'a stream' : 'a JSON body'}`);
      }
      return { kind: 'passthrough', target, result };
    }
    if (provider.openEvents !== undefined) {
      const rest = await provider.openEvents(route.request, call);
      return { kind: 'events', target, first: { type: 'response-start', upstreamModel: target.upstreamModel }, rest };
    }
    // A provider whose answer is an async iterable (the simulated one): its first event decides.
    const iterator = provider.stream(route.request, call)[Symbol.asyncIterator]();
    let first: IteratorResult<CanonicalEvent>;
    try {
      first = await iterator.next();
    } catch (error) {
      await iterator.return?.().catch(() => undefined);
      throw error;
    }
    if (first.done === true) throw new UpstreamError('protocol', `${target.label} ended without an answer`);
    if (first.value.type === 'error') {
      await iterator.return?.().catch(() => undefined);
      throw new UpstreamError('protocol', `${target.label} failed before answering: ${first.value.message}`);
    }
    return { kind: 'events', target, first: first.value, rest: new IteratedEvents(iterator) };
  }

  private weightedShuffle(targets: Target[]): Target[] {
    const pool = [...targets];
    const ordered: Target[] = [];
    while (pool.length > 0) {
      const total = pool.reduce((sum, target) => sum + target.weight, 0);
      let pick = this.random() * total;
      let index = 0;
      for (; index < pool.length - 1; index++) {
        pick -= pool[index]!.weight;
        if (pick < 0) break;
      }
      ordered.push(...pool.splice(index, 1));
    }
    return ordered;
  }
}

function targetChange(target: Target, transition: 'down' | 'up'): HealthChange {
  return { transition, scope: 'target', provider: target.provider.name, upstreamModel: target.upstreamModel, label: target.label };
}

/** Whether a pass-through answered in the form asked for (the providers do; this makes it a type). */
function answersAsAsked<Stream extends boolean>(result: PassthroughResult, stream: Stream): result is PassthroughResult<Stream> {
  return (result.kind === 'stream') === stream;
}
