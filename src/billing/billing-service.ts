/**
 * Reserve, then settle: before a request goes upstream its worst case (estimated input plus the
 * allowed output) is held against the account; when the answer ends the hold is settled at the
 * actual cost. The store does both atomically, so concurrent requests can never spend the same
 * balance twice, and a hold is settled (or released) exactly once.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors/gateway-error.js';
import type { Usage } from '../protocol/canonical.js';
import type { Charge, Store } from '../store/store.js';
import { costOf, type ModelPrices } from './prices.js';
import { costOfTokens } from './money.js';

/** An open hold, as returned by `reserve` and passed back to `settle`. */
export interface Hold {
  id: string;
  accountId: string;
  keyId: string;
  requestId: string;
  /** Catalog model id: its prices settle the hold. */
  model: string;
  amountNanos: bigint;
}

export interface BillingServiceDeps {
  store: Store;
  /** Prices by catalog model id (see pricesFromConfig). */
  prices: ReadonlyMap<string, ModelPrices>;
  now?: () => Date;
  /** A hold not settled within this time (its request crashed) is released by `releaseExpired`. */
  holdTtlSeconds: number;
}

export class BillingService {
  private readonly store: Store;
  private readonly prices: ReadonlyMap<string, ModelPrices>;
  private readonly now: () => Date;
  private readonly holdTtlMilliseconds: number;

  constructor(deps: BillingServiceDeps) {
    if (!Number.isSafeInteger(deps.holdTtlSeconds) || deps.holdTtlSeconds <= 0) {
      throw new RangeError(`holdTtlSeconds must be a positive integer, got ${deps.holdTtlSeconds}`);
    }
    this.store = deps.store;
    this.prices = deps.prices;
    this.now = deps.now ?? (() => new Date());
    this.holdTtlMilliseconds = deps.holdTtlSeconds * 1_000;
  }

  /** Amount to hold: estimated input tokens at the input price + maxOutputTokens at the output price. */
  holdAmount(model: string, estimatedInputTokens: number, maxOutputTokens: number): bigint {
    const prices = this.pricesOf(model);
    return costOfTokens(estimatedInputTokens, prices.inputPerMillion) + costOfTokens(maxOutputTokens, prices.outputPerMillion);
  }

  /** Opens a hold or throws new GatewayError('insufficient_balance') (403). */
  async reserve(input: {
    accountId: string;
    keyId: string;
    requestId: string;
    model: string;
    estimatedInputTokens: number;
    maxOutputTokens: number;
  }): Promise<Hold> {
    const amountNanos = this.holdAmount(input.model, input.estimatedInputTokens, input.maxOutputTokens);
    const hold: Hold = {
      id: `hold_${randomUUID()}`,
      accountId: input.accountId,
      keyId: input.keyId,
      requestId: input.requestId,
      model: input.model,
      amountNanos,
    };
    const opened = await this.store.openHold({
      id: hold.id,
      accountId: hold.accountId,
      keyId: hold.keyId,
      requestId: hold.requestId,
      amountNanos,
      expiresAt: new Date(this.now().getTime() + this.holdTtlMilliseconds),
    });
    // A disabled account also lands here: to the client it is a balance it cannot spend.
    if (!opened) throw new GatewayError('insufficient_balance');
    return hold;
  }

  /**
   * Settles exactly once at the actual cost of `usage` (null or all-zero usage ⇒ nothing billed).
   * Returns the cost billed: 0 when the hold was already settled or had expired, because then the
   * store changed nothing.
   */
  async settle(hold: Hold, usage: Usage | null): Promise<bigint> {
    const charge = usage === null || isZeroUsage(usage) ? null : this.chargeFor(hold, usage);
    const settled = await this.store.settleHold(hold.id, charge);
    return settled && charge !== null ? charge.costNanos : 0n;
  }

  /**
   * Keeps `hold` from expiring while its request runs, however long a stream lasts: its expiry is
   * pushed forward every third of the time to live. Returns the function that stops it (call it
   * when settling). A process that dies stops extending, so its holds still expire.
   */
  keepAlive(hold: Hold, onError: (error: unknown) => void): () => void {
    const timer = setInterval(() => {
      this.store.extendHold(hold.id, new Date(this.now().getTime() + this.holdTtlMilliseconds)).catch(onError);
    }, Math.max(250, Math.floor(this.holdTtlMilliseconds / 3)));
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Releases expired holds; returns how many. */
  releaseExpired(): Promise<number> {
    return this.store.releaseExpiredHolds(this.now());
  }

  private chargeFor(hold: Hold, usage: Usage): Charge {
    return {
      requestId: hold.requestId,
      keyId: hold.keyId,
      model: hold.model,
      costNanos: costOf(usage, this.pricesOf(hold.model)),
      inputTokens: usage.inputTokens,
      cachedInputTokens: usage.cachedInputTokens,
      cacheWriteInputTokens: usage.cacheWriteInputTokens ?? 0,
      outputTokens: usage.outputTokens,
      reasoningTokens: usage.reasoningTokens,
    };
  }

  private pricesOf(model: string): ModelPrices {
    const prices = this.prices.get(model);
    // Routing only admits catalog models, and every catalog model has prices, so this is a model
    // outside the catalog: to the client, not available (the spec's 503 text, unchanged).
    if (prices === undefined) throw new GatewayError('model_unavailable');
    return prices;
  }
}

function isZeroUsage(usage: Usage): boolean {
  return usage.inputTokens === 0 && usage.cachedInputTokens === 0 && usage.outputTokens === 0 && usage.reasoningTokens === 0;
}
