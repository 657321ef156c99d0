/**
 * Reserve, then settle: before a request goes upstream its worst case (a bound of its input plus
 * the allowed output) is held against the account; when the answer ends the hold is settled at the
 * actual cost, never more than the hold: whatever an upstream reports beyond it is recorded as an
 * excess for the operator and not debited, so no balance goes below zero. The store does both
 * atomically, so concurrent requests can never spend the same balance twice, and a hold is settled
 * (or expires) exactly once.
 */
import { GatewayError } from '../errors/gateway-error.js';
import { idSuffix } from '../lib/ids.js';
import type { PricedUnits, Surface, Usage } from '../protocol/canonical.js';
import type { SliceHold } from '../store/slice-records.js';
import { KeyBudgetExceededError, type Charge, type KeyBudget, type MoneyStore, type NewHold } from '../store/store.js';
import { withMargin, type InputBound } from './input-bounds.js';
import { budgetWindow } from './key-budget.js';
import type { QuotaSlices } from './quota-slices.js';
import { costOf, costOfUnits, type ModelPrices } from './prices.js';
import { costOfTokens, formatUsd } from './money.js';

/**
 * The headers a refused hold answers with beside the spec's exact 403 body (docs/wire-protocols.md
 * §6.3): what the request needed held, and what was left to hold it from, in USD.
 */
export const HOLD_NEEDED_HEADER = 'x-tollgate-hold-needed-usd';
export const BUDGET_LEFT_HEADER = 'x-tollgate-budget-left-usd';

/** An open hold, as returned by `reserve` and passed back to `settle`. */
export interface Hold {
  id: string;
  accountId: string;
  keyId: string;
  requestId: string;
  /** Catalog model id: its prices settle the hold. */
  model: string;
  amountNanos: bigint;
  /**
   * The model's prices when the hold opened: the hold settles at them even when the catalog
   * changes meanwhile (docs/architecture.md, "The catalog at runtime"); absent: the current ones.
   */
  prices?: ModelPrices;
  /**
   * Admitted in memory from this process's quota slice `id` (docs/architecture.md, Money: "Quota
   * slices"): the hold has no row until it settles or reaches its first checkpoint, which write it.
   */
  slice?: { id: string; surface: Surface; admittedAt: Date };
}

/** How a hold was admitted: from a quota slice in memory, or by its own guarded UPDATE. */
export type AdmissionPath = 'slice' | 'exact';

export interface BillingServiceDeps {
  store: MoneyStore;
  /** Prices by catalog model id (see pricesFromConfig). */
  prices: ReadonlyMap<string, ModelPrices>;
  /** Input margins and image allowances by catalog model id (see inputBoundsFromConfig); none by default. */
  inputBounds?: ReadonlyMap<string, InputBound>;
  now?: () => Date;
  /** A hold not settled within this time (its request crashed) is ended by `releaseExpired`. */
  holdTtlSeconds: number;
  /**
   * The budget of a key (undefined: none), from the key cache on the request path; read from the
   * store by default. Its period is taken at this service's `now`.
   */
  keyBudget?: (keyId: string) => Promise<KeyBudget | undefined>;
  /**
   * What an account can still hold (its balance less its open holds), read after a refusal to
   * explain it; absent: the refusal names only the hold it needed.
   */
  spendable?: (accountId: string) => Promise<bigint | undefined>;
  /** This process's quota slices; absent: every hold takes the exact path. */
  slices?: QuotaSlices;
  /** Told how each hold was admitted (the metric of slices against the exact path). */
  onAdmitted?: (path: AdmissionPath) => void;
}

/** What a settlement billed. */
export interface Settlement {
  /** Debited: at most the hold. 0 when the hold was already settled or had expired. */
  billedNanos: bigint;
  /** Reported beyond the hold: recorded, not debited. */
  excessNanos: bigint;
}

const NOTHING_SETTLED: Settlement = Object.freeze({ billedNanos: 0n, excessNanos: 0n });
const NO_BOUND: InputBound = Object.freeze({ marginPercent: 0, imageTokens: 765 });

export class BillingService {
  private readonly store: MoneyStore;
  private prices: ReadonlyMap<string, ModelPrices>;
  private inputBounds: ReadonlyMap<string, InputBound>;
  private readonly now: () => Date;
  private readonly holdTtlMilliseconds: number;
  private readonly keyBudget: (keyId: string) => Promise<KeyBudget | undefined>;
  private readonly spendable: ((accountId: string) => Promise<bigint | undefined>) | undefined;
  private readonly slices: QuotaSlices | undefined;
  private readonly onAdmitted: ((path: AdmissionPath) => void) | undefined;

  constructor(deps: BillingServiceDeps) {
    if (!Number.isSafeInteger(deps.holdTtlSeconds) || deps.holdTtlSeconds <= 0) {
      throw new RangeError(`holdTtlSeconds must be a positive integer, got ${deps.holdTtlSeconds}`);
    }
    this.store = deps.store;
    this.prices = deps.prices;
    this.inputBounds = deps.inputBounds ?? new Map();
    this.now = deps.now ?? (() => new Date());
    this.holdTtlMilliseconds = deps.holdTtlSeconds * 1_000;
    this.keyBudget = deps.keyBudget ?? (async (keyId) => (await deps.store.findKey(keyId))?.budget);
    this.spendable = deps.spendable;
    this.slices = deps.slices;
    this.onAdmitted = deps.onAdmitted;
  }

  /**
   * A new catalog version's prices and input bounds, for holds opened from now on; open holds
   * keep the prices they opened with.
   */
  usePrices(prices: ReadonlyMap<string, ModelPrices>, inputBounds: ReadonlyMap<string, InputBound>): void {
    this.prices = prices;
    this.inputBounds = inputBounds;
  }

  /** The model's input margin and image allowance (what the request body is bounded with). */
  inputBound(model: string): InputBound {
    return this.inputBounds.get(model) ?? NO_BOUND;
  }

  /**
   * Amount to hold: the input bound (with the model's margin) at the input price + maxOutputTokens
   * at the output price + the units billed each (images, audio, characters) when the endpoint
   * bills them, bounded by what the request says (protocol/…: the images asked for, the file's
   * duration).
   */
  holdAmount(model: string, inputTokenBound: number, maxOutputTokens: number, units?: PricedUnits): bigint {
    const prices = this.pricesOf(model);
    const inputTokens = withMargin(inputTokenBound, this.inputBound(model).marginPercent);
    // Any input token may turn out to be a cache write or an image: hold at the dearest of the prices.
    const inputPrice = [prices.cacheWritePerMillion, prices.imageInputPerMillion].reduce<bigint>(
      (dearest, price) => (price !== undefined && price > dearest ? price : dearest),
      prices.inputPerMillion,
    );
    const unitCost = units === undefined ? 0n : costOfUnits(units, prices);
    return costOfTokens(inputTokens, inputPrice) + costOfTokens(maxOutputTokens, prices.outputPerMillion) + unitCost;
  }

  /**
   * Opens a hold, or throws the 403 GatewayError `insufficient_balance` (the balance less open holds
   * cannot cover it) or `key_budget_exceeded` (the key's budget in its current period cannot).
   */
  async reserve(input: {
    accountId: string;
    keyId: string;
    requestId: string;
    model: string;
    /**
     * The endpoint the request came through: the hold keeps it, and whoever settles the hold writes
     * it on the charge (the usage report's `endpoint` grouping).
     */
    surface: Surface;
    /** A bound of the input tokens the upstream can bill (protocol/input-bound.ts), before the margin. */
    inputTokenBound: number;
    maxOutputTokens: number;
    /** The most units billed each the request can use (images asked for, the file's duration). */
    units?: PricedUnits;
  }): Promise<Hold> {
    const prices = this.pricesOf(input.model);
    const amountNanos = this.holdAmount(input.model, input.inputTokenBound, input.maxOutputTokens, input.units);
    const hold: Hold = {
      id: `hold_${idSuffix()}`,
      accountId: input.accountId,
      keyId: input.keyId,
      requestId: input.requestId,
      model: input.model,
      amountNanos,
      prices,
    };
    const budget = await this.keyBudget(input.keyId);
    // A key with a budget takes the exact path: its budget period's row is not sliced.
    const sliceId = budget === undefined ? this.slices?.admit(hold.accountId, hold.id, amountNanos) : undefined;
    if (sliceId !== undefined) {
      this.onAdmitted?.('slice');
      return { ...hold, slice: { id: sliceId, surface: input.surface, admittedAt: this.now() } };
    }
    const opening: NewHold = {
      id: hold.id,
      accountId: hold.accountId,
      keyId: hold.keyId,
      requestId: hold.requestId,
      model: hold.model,
      amountNanos,
      expiresAt: this.expiryFromNow(),
      surface: input.surface,
      ...(budget === undefined ? {} : { keyBudget: budgetWindow(budget.period, this.now()) }),
    };
    let opened = await this.openExactly(opening, budget);
    // Refused by the balance, while slices of it may be out: their unused parts come back (this
    // process's at once, other processes' recalled), then the hold is tried once more.
    if (!opened && this.slices !== undefined) {
      await this.slices.recall(hold.accountId);
      opened = await this.openExactly(opening, budget);
    }
    // A disabled account also lands here: to the client it is a balance it cannot spend.
    if (!opened) throw new GatewayError('insufficient_balance', { headers: refusalHeaders(amountNanos, await this.spendable?.(input.accountId)) });
    this.onAdmitted?.('exact');
    if (budget === undefined) this.slices?.openedExactly(hold.accountId, hold.id, amountNanos);
    return hold;
  }

  /** The hold by its own guarded UPDATE: whether the balance covered it; a key budget's refusal is its 403. */
  private async openExactly(opening: NewHold, budget: KeyBudget | undefined): Promise<boolean> {
    try {
      return await this.store.openHold(opening);
    } catch (error) {
      if (error instanceof KeyBudgetExceededError && budget !== undefined) {
        const window = budgetWindow(budget.period, this.now());
        const spend = await this.store.keySpend(opening.keyId, window);
        throw new GatewayError('key_budget_exceeded', { headers: refusalHeaders(opening.amountNanos, budget.limitNanos - spend.spentNanos - spend.reservedNanos) });
      }
      if (error instanceof KeyBudgetExceededError) throw new GatewayError('key_budget_exceeded', { headers: refusalHeaders(opening.amountNanos, undefined) });
      throw error;
    }
  }

  /**
   * Settles exactly once at the actual cost of `usage`, capped at the hold (null or all-zero usage
   * ⇒ nothing billed). Returns nothing billed when the hold was already settled or had expired,
   * because then the store changed nothing.
   */
  async settle(hold: Hold, usage: Usage | null): Promise<Settlement> {
    const charge = usage === null || isZeroUsage(usage) ? null : this.chargeFor(hold, usage);
    const settled = await this.store.settleHold(hold.id, charge, sliceHoldOf(hold));
    // Settled now or before, or its slice is gone: either way it has left its slice.
    this.slices?.settled(hold.id);
    return settled && charge !== null ? { billedNanos: charge.costNanos, excessNanos: charge.excessNanos } : NOTHING_SETTLED;
  }

  /** A hold admitted from a slice was moved into a hold row by a checkpoint (or found one): it has left its slice. */
  converted(hold: Hold): void {
    this.slices?.released(hold.id);
  }

  /** The settle retrier gave the hold up: what became of it is for its slice's lease to end. */
  abandoned(hold: Hold): void {
    this.slices?.abandoned(hold.id);
  }

  /** What `usage` costs against `hold`, capped at it: what an expired hold would settle. */
  cappedCost(hold: Hold, usage: Usage): bigint {
    const cost = costOf(usage, hold.prices ?? this.pricesOf(hold.model));
    return cost < hold.amountNanos ? cost : hold.amountNanos;
  }

  /** A new expiry for a hold whose request is known to be running. */
  expiryFromNow(): Date {
    return new Date(this.now().getTime() + this.holdTtlMilliseconds);
  }

  /** Ends expired slices (what is left in each goes back) and expired holds (each settles its last checkpoint); returns how many holds. */
  async releaseExpired(): Promise<number> {
    await this.store.releaseExpiredSlices(this.now());
    return this.store.releaseExpiredHolds(this.now());
  }

  private chargeFor(hold: Hold, usage: Usage): Charge {
    const cost = costOf(usage, hold.prices ?? this.pricesOf(hold.model));
    const costNanos = cost < hold.amountNanos ? cost : hold.amountNanos;
    return {
      requestId: hold.requestId,
      keyId: hold.keyId,
      model: hold.model,
      costNanos,
      excessNanos: cost - costNanos,
      inputTokens: usage.inputTokens,
      cachedInputTokens: usage.cachedInputTokens,
      cacheWriteInputTokens: usage.cacheWriteInputTokens ?? 0,
      outputTokens: usage.outputTokens,
      reasoningTokens: usage.reasoningTokens,
    };
  }

  /** The prices of catalog model `model`; the 503 `model_unavailable` for a model outside the catalog. */
  pricesOf(model: string): ModelPrices {
    const prices = this.prices.get(model);
    // Routing only admits catalog models, and every catalog model has prices, so this is a model
    // outside the catalog: to the client, not available (the spec's 503 text, unchanged).
    if (prices === undefined) throw new GatewayError('model_unavailable');
    return prices;
  }
}

/** What a hold admitted from a slice writes as its row when it settles or reaches its first checkpoint. */
export function sliceHoldOf(hold: Hold): SliceHold | undefined {
  if (hold.slice === undefined) return undefined;
  return {
    sliceId: hold.slice.id,
    accountId: hold.accountId,
    keyId: hold.keyId,
    requestId: hold.requestId,
    model: hold.model,
    amountNanos: hold.amountNanos,
    surface: hold.slice.surface,
    admittedAt: hold.slice.admittedAt,
  };
}

/**
 * The refusal's explanation: the hold needed, and what was left (never below zero; read just after
 * the refusal, so a request settling meanwhile may have moved it a little).
 */
function refusalHeaders(neededNanos: bigint, leftNanos: bigint | undefined): Record<string, string> {
  const headers: Record<string, string> = { [HOLD_NEEDED_HEADER]: formatUsd(neededNanos) };
  if (leftNanos !== undefined) headers[BUDGET_LEFT_HEADER] = formatUsd(leftNanos < 0n ? 0n : leftNanos);
  return headers;
}

function isZeroUsage(usage: Usage): boolean {
  const units = usage.units;
  const noUnits = units === undefined || ((units.images ?? 0) === 0 && (units.audioMilliseconds ?? 0) === 0 && (units.characters ?? 0) === 0);
  return noUnits && usage.inputTokens === 0 && usage.cachedInputTokens === 0 && usage.outputTokens === 0 && usage.reasoningTokens === 0;
}
