/**
 * One `/v1` answer from its first step to its bill. It owns what must end exactly once, whatever
 * path the answer takes: the abort signal that stops the upstream when the client goes away, the
 * hold and its keeping (hold keeper), the count of unsettled answers a drain waits for, and the
 * settlement, made in one place (`settle`) and only once, however often it is asked for. It also
 * fills the request's outcome (observability/request-outcome.ts) as the answer goes.
 *
 * Every way an answer ends (a JSON body, a translated stream's finish or failure, a pass-through's
 * last frame or failure) ends through `conclude`: the settlement (and the keeping of a stored
 * response) before the last bytes (docs/architecture.md, Money): a client that received a complete
 * answer was billed for it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BillingService, Hold } from '../../billing/billing-service.js';
import type { HoldKeeper } from '../../billing/hold-keeper.js';
import type { SettleRetrier } from '../../billing/settle-retry.js';
import type { UsageMeter } from '../../billing/usage-meter.js';
import type { GatewayErrorCode } from '../../errors/gateway-error.js';
import type { PricedUnits, Surface, Usage } from '../../protocol/canonical.js';
import type { Target } from '../../routing/catalog.js';
import type { ApiContext } from './api-context.js';
import type { InFlight } from './in-flight.js';
import type { Metrics } from '../../observability/metrics.js';
import { surfaceLabel } from '../../observability/request-metrics.js';
import type { RequestOutcome } from '../../observability/request-outcome.js';
import type { KeepResponse } from './surfaces/surface.js';
import { toGatewayError } from '../errors.js';

export interface LifecycleServices {
  billing: BillingService;
  /** Keeps running requests' holds alive and checkpoints their metered usage. */
  holdKeeper: HoldKeeper;
  /** Answers whose bill is not settled yet (a drain waits for them). */
  inFlight: InFlight;
  /** Takes over settlements that failed (database briefly away); they never bill twice. */
  settleRetrier: SettleRetrier;
  metrics: Pick<Metrics, 'billingExcess' | 'rejectedUsageReports' | 'openStreams' | 'answerFaults' | 'clientDisconnects'>;
  now: () => number;
}

export interface ReserveInput {
  /** Catalog model id. */
  model: string;
  inputTokenBound: number;
  maxOutputTokens: number;
  /** The most units billed each the request can use (billing/prices.ts). */
  units?: PricedUnits;
}

/** Where in an answer the gateway itself failed (the `stage` of `tollgate_answer_faults_total`). */
export type FaultStage = 'metering' | 'delivery';

/** The hold of a running answer and what ends it. */
interface Running {
  hold: Hold;
  meter: UsageMeter;
  openedAt: number;
  stopKeeping: () => void;
  endInFlight: () => void;
}

/**
 * Runs one `/v1` answer in its lifecycle, for every handler alike: a client gone is nobody to
 * answer (499, not a failure); anything else thrown is the answer now (the upstream call is stopped,
 * the failure recorded, and the error goes to the renderer); whatever ended it, the hold is settled
 * before the handler returns (a no-op when the answer's `conclude` already did).
 */
export async function runAnswer(
  services: LifecycleServices,
  request: FastifyRequest,
  reply: FastifyReply,
  surface: Surface,
  serve: (lifecycle: AnswerLifecycle) => Promise<unknown>,
): Promise<unknown> {
  const lifecycle = new AnswerLifecycle(services, request, reply);
  try {
    return await serve(lifecycle);
  } catch (error) {
    if (lifecycle.clientGone) return reply.code(499).send();
    lifecycle.abort();
    lifecycle.failed(toGatewayError(error).gatewayError.errorCode);
    throw error;
  } finally {
    await lifecycle.settle();
    lifecycle.end(surface);
  }
}

export class AnswerLifecycle {
  readonly #services: LifecycleServices;
  readonly #request: FastifyRequest;
  readonly #abort = new AbortController();
  /** Whether `#abort` was aborted (only `abort()` does), without asking the signal through its getters. */
  #aborted = false;
  /**
   * Set when the client closed the connection before the answer ended (rather than the gateway
   * giving up): whether anything of the answer had been sent by then.
   */
  #clientLeft: 'before_answer' | 'mid_answer' | undefined;
  #running: Running | undefined;
  /** The endpoint, from `begin`: the hold is opened for it, and its charge is billed under it. */
  #surface: Surface | undefined;
  #settlement: Promise<void> | undefined;
  /** Saves the final response object, when the surface keeps this answer. */
  #keep: KeepResponse | undefined;

  /** Create it first, so that a client gone at any later step is noticed (and its hold released). */
  #ended: (() => void) | undefined;

  constructor(services: LifecycleServices, request: FastifyRequest, reply: FastifyReply) {
    this.#services = services;
    this.#request = request;
    reply.raw.on('close', () => {
      if (reply.raw.writableFinished) return;
      this.#clientLeft = reply.raw.headersSent ? 'mid_answer' : 'before_answer';
      this.abort();
    });
  }

  /** Aborted when the client goes away before the answer ended, or when the answer is given up. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /**
   * The client closed the connection before the answer ended. Whatever the answer threw after
   * that (the upstream call's abort, a failover cut short) is the consequence, not a failure.
   */
  get clientGone(): boolean {
    return this.#clientLeft !== undefined;
  }

  /** Stops the upstream call (no-op once it ended or was stopped). */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#abort.abort();
  }

  /** The model is known: from here on the request has an outcome. */
  begin(context: ApiContext, surface: Surface, model: string, stream: boolean): void {
    this.#surface = surface;
    const ended = new Promise<void>((resolve) => (this.#ended = resolve));
    this.#request.outcome = {
      accountId: context.account.id,
      keyId: context.key.id,
      surface,
      model,
      target: null,
      failedTarget: null,
      stream,
      firstByteAt: null,
      usage: null,
      costNanos: 0n,
      errorCode: null,
      toldCode: null,
      ended,
    };
  }

  /**
   * The handler is done with the answer (after its settlement): resolves the outcome's `ended`. A
   * client that left is normal, not an error: it is logged at debug and counted, never as a failure.
   */
  end(surface: Surface): void {
    const stage = this.#clientLeft;
    if (stage !== undefined) {
      this.#services.metrics.clientDisconnects.inc({ surface: surfaceLabel(surface), stage });
      this.#request.log.debug({ surface, stage }, 'client disconnected');
    }
    this.#ended?.();
  }

  /**
   * Places the hold for the worst case (or throws the 403) and keeps it while the answer runs;
   * `meter` is what the hold settles on. After `begin`, whose surface the hold is opened for.
   */
  async reserve(context: ApiContext, input: ReserveInput, meter: UsageMeter): Promise<void> {
    const services = this.#services;
    const surface = this.#surface;
    // A gateway bug, not the client's: a hold must know its endpoint, or its charge would be billed under none.
    if (surface === undefined) throw new Error('reserve called before begin: the hold would not know its endpoint');
    const openedAt = services.now();
    const hold = await services.billing.reserve({ accountId: context.account.id, keyId: context.key.id, requestId: this.#request.id, surface, ...input });
    this.#running = {
      hold,
      meter,
      openedAt,
      stopKeeping: services.holdKeeper.track(hold, () => meter.checkpoint()),
      endInFlight: services.inFlight.begin(),
    };
  }

  /**
   * The target that answers: its upstream accepted the request (the router commits to a target
   * once it answered 2xx), so the input is billed from here on, even if the client leaves before
   * any output.
   */
  routed(target: Target): void {
    this.#running?.meter.accepted();
    this.#update((outcome) => (outcome.target = target.label));
  }

  /** A target that was tried and failed before answering (the last one is kept). */
  targetFailed(target: Target): void {
    this.#update((outcome) => (outcome.failedTarget = target.label));
  }

  /** A stream is open to the client until the returned function is called (the open-streams gauge). */
  streamOpened(): () => void {
    const gauge = this.#services.metrics.openStreams;
    gauge.inc();
    let open = true;
    return () => {
      if (open) gauge.dec();
      open = false;
    };
  }

  /** The first bytes of the answer are being written. */
  firstByte(): void {
    this.#update((outcome) => (outcome.firstByteAt ??= this.#services.now()));
  }

  /**
   * The answer failed with `code` (the first failure is the one kept); `told` is the code the
   * client read, when the upstream's own failure went to it as it was.
   */
  failed(code: GatewayErrorCode, told?: string): void {
    this.#update((outcome) => {
      if (outcome.errorCode !== null) return;
      outcome.errorCode = code;
      if (told !== undefined) outcome.toldCode = told;
    });
  }

  /**
   * A fault of the gateway itself inside this answer (a bug, neither the upstream's nor the
   * client's): logged at error level with the request id and counted, not hidden, while the
   * answer still ends and its hold still settles.
   */
  fault(stage: FaultStage, error: unknown): void {
    this.#services.metrics.answerFaults.inc({ stage });
    this.#request.log.error({ err: error, stage }, 'the gateway failed inside an answer');
  }

  /** The answer's final response object is to be saved with `keep` (before its last bytes leave). */
  keepWith(keep: KeepResponse | undefined): void {
    this.#keep = keep;
  }

  /**
   * The end of the answer, one call on every path: the settlement and the keeping of the final
   * response (asked of `response` only when it is kept) run together, and once both are done
   * `last` writes or returns the last bytes. So a client that read the last frame was billed for
   * the answer and finds it stored.
   */
  async conclude<T>(response: () => Record<string, unknown> | undefined, last: () => T): Promise<T> {
    const settled = this.settle();
    const keep = this.#keep;
    const kept = keep === undefined ? undefined : response();
    await Promise.all([settled, kept === undefined ? undefined : keep?.(kept)]);
    return last();
  }

  /**
   * Settles the hold on the usage metered so far (nothing, when the upstream never accepted the
   * request), exactly once: every later call returns the same settlement. Never rejects: a
   * settlement the database refuses goes to the retrier, and the answer goes on (the one case where
   * a complete answer can reach a client before its charge is durable; the retrier writes it once
   * the database answers).
   */
  settle(): Promise<void> {
    const running = this.#running;
    if (running === undefined) return Promise.resolve();
    return (this.#settlement ??= this.#settleOnce(running));
  }

  async #settleOnce({ hold, meter, openedAt, stopKeeping, endInFlight }: Running): Promise<void> {
    const { billing, metrics, settleRetrier } = this.#services;
    const log = this.#request.log;
    stopKeeping();
    const usage = await this.#billedUsage(hold, meter);
    this.#update((outcome) => (outcome.usage = usage));
    try {
      const { billedNanos, excessNanos } = await billing.settle(hold, usage);
      this.#update((outcome) => (outcome.costNanos = billedNanos));
      if (excessNanos > 0n) {
        metrics.billingExcess.inc({ model: hold.model }, Number(excessNanos));
        log.warn({ model: hold.model, holdId: hold.id, excessNanos: excessNanos.toString() }, 'the upstream reported more than the hold covers; the excess is recorded, not billed');
      }
      log.info({ model: hold.model, keyId: hold.keyId, usage, costNanos: billedNanos.toString() }, 'settled');
    } catch (error) {
      // Not the client's problem: the retrier settles it once the database answers again.
      log.error({ err: error, holdId: hold.id }, 'settling the hold failed; retrying in the background');
      settleRetrier.retry(hold, usage, openedAt);
    } finally {
      endInFlight();
    }
  }

  /**
   * What the hold settles on: nothing when the upstream never accepted the request. Never throws: a meter that throws
   * (a gateway bug) must not leave the hold open until its expiry nor the answer unsettled, so the
   * fault is logged and counted and the hold released, since what was produced cannot be known.
   */
  async #billedUsage(hold: Hold, meter: UsageMeter): Promise<Usage | null> {
    let usage: Usage | null;
    try {
      usage = meter.billable ? await meter.usage() : null;
    } catch (error) {
      this.fault('metering', error);
      return null;
    }
    const counting = meter.countingFault;
    if (counting !== undefined) this.fault('metering', counting.error);
    if (meter.rejectedReport) {
      this.#services.metrics.rejectedUsageReports.inc({ model: hold.model });
      this.#request.log.warn({ model: hold.model, holdId: hold.id }, 'the upstream reported usage that fails the sanity check; billing the metered count');
    }
    return usage;
  }

  #update(change: (outcome: RequestOutcome) => void): void {
    const outcome = this.#request.outcome;
    if (outcome !== null) change(outcome);
  }
}
