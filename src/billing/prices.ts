/**
 * Model prices in integer nano-USD (per 1M tokens, and per unit for what is billed per unit:
 * images, seconds of audio, 1M characters), converted once from the catalog's USD figures, and
 * the cost of one answer's usage. No floats: see money.ts.
 */
import type { ConfigFile } from '../config/schema.js';
import type { PricedUnits, Usage } from '../protocol/canonical.js';
import { costOfTokens, usdToNanos } from './money.js';

/** Nano-USD per 1M tokens. */
export interface ModelPrices {
  inputPerMillion: bigint;
  /** Input tokens served from the upstream's prompt cache; the input price unless configured. */
  cachedInputPerMillion: bigint;
  /** Input tokens written to the upstream's prompt cache (Anthropic); absent: the input price. */
  cacheWritePerMillion?: bigint;
  /** Input tokens that are images; absent: the input price. */
  imageInputPerMillion?: bigint;
  /** Output tokens, reasoning included. */
  outputPerMillion: bigint;
  /** Per image, by tier (`<size>/<quality>`, `<size>`, `default`): see imageTier. Empty: not priced per image. */
  perImage?: ReadonlyMap<string, bigint>;
  /** Per second of input audio; absent: not priced per second. */
  perAudioSecond?: bigint;
  /** Per 1M characters spoken; absent: the input price. */
  perMillionCharacters?: bigint;
}

/** The tier `default`, the last one looked up. */
export const DEFAULT_IMAGE_TIER = 'default';

/** Prices by catalog model id. */
export function pricesFromConfig(models: ConfigFile['models']): ReadonlyMap<string, ModelPrices> {
  const prices = new Map<string, ModelPrices>();
  for (const model of models) {
    const inputPerMillion = usdToNanos(model.prices.input);
    prices.set(
      model.id,
      Object.freeze({
        inputPerMillion,
        cachedInputPerMillion: model.prices.cached_input === undefined ? inputPerMillion : usdToNanos(model.prices.cached_input),
        cacheWritePerMillion: model.prices.cache_write === undefined ? inputPerMillion : usdToNanos(model.prices.cache_write),
        ...(model.prices.image_input === undefined ? {} : { imageInputPerMillion: usdToNanos(model.prices.image_input) }),
        outputPerMillion: usdToNanos(model.prices.output),
        ...(model.prices.image === undefined ? {} : { perImage: new Map(Object.entries(model.prices.image).map(([tier, usd]) => [tier, usdToNanos(usd)])) }),
        ...(model.prices.audio_second === undefined ? {} : { perAudioSecond: usdToNanos(model.prices.audio_second) }),
        ...(model.prices.characters === undefined ? {} : { perMillionCharacters: usdToNanos(model.prices.characters) }),
      }),
    );
  }
  return prices;
}

/**
 * The cost of `usage` in nano-USD: fresh input at the input price, cached input at the cached
 * price, cache writes at the cache-write price, output (which already includes reasoning) at the
 * output price; each part rounded up to the nano, then summed. Cache counts above the input count
 * (a confused upstream) are capped at it, cached first, so no token is billed twice.
 */
export function costOf(usage: Usage, prices: ModelPrices): bigint {
  const cachedInputTokens = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const cacheWriteInputTokens = Math.min(usage.cacheWriteInputTokens ?? 0, usage.inputTokens - cachedInputTokens);
  const imageInputTokens = Math.min(usage.imageInputTokens ?? 0, usage.inputTokens - cachedInputTokens - cacheWriteInputTokens);
  const freshInputTokens = usage.inputTokens - cachedInputTokens - cacheWriteInputTokens - imageInputTokens;
  return (
    costOfTokens(freshInputTokens, prices.inputPerMillion) +
    costOfTokens(cachedInputTokens, prices.cachedInputPerMillion) +
    costOfTokens(cacheWriteInputTokens, prices.cacheWritePerMillion ?? prices.inputPerMillion) +
    costOfTokens(imageInputTokens, prices.imageInputPerMillion ?? prices.inputPerMillion) +
    costOfTokens(usage.outputTokens, prices.outputPerMillion) +
    (usage.units === undefined ? 0n : costOfUnits(usage.units, prices))
  );
}

/**
 * The cost of units billed each: images at their tier's price (a tier without a price costs the
 * dearest the model has: the request was refused before the call unless the upstream chose it),
 * audio by the millisecond at the price per second, rounded up to the nano, characters at the
 * price per 1M characters (the input price when the model has none).
 */
export function costOfUnits(units: PricedUnits, prices: ModelPrices): bigint {
  let cost = 0n;
  if (units.images !== undefined && units.images > 0) {
    cost += BigInt(units.images) * (imagePrice(prices, units.imageTier ?? DEFAULT_IMAGE_TIER) ?? dearestImagePrice(prices));
  }
  if (units.audioMilliseconds !== undefined && units.audioMilliseconds > 0) {
    cost += ceilDivide(BigInt(units.audioMilliseconds) * (prices.perAudioSecond ?? 0n), 1_000n);
  }
  if (units.characters !== undefined && units.characters > 0) {
    cost += costOfTokens(units.characters, prices.perMillionCharacters ?? prices.inputPerMillion);
  }
  return cost;
}

/** The price of one image of `tier` (a key of the model's `image` prices), undefined when it has none. */
export function imagePrice(prices: ModelPrices, tier: string): bigint | undefined {
  return prices.perImage?.get(tier);
}

/**
 * The tier an image request is billed at. With its size and quality both given: the first of
 * `<size>/<quality>`, `<size>`, `default` the model prices. When the upstream chooses either
 * (`auto`): the dearest tier that can match, so that the hold covers whatever it chooses (the
 * answer says what it chose, and is billed at that). Undefined when the model has no price that
 * can match: the request is refused.
 */
export function imageTier(prices: ModelPrices, size: string, quality: string): string | undefined {
  const tiers = prices.perImage ?? new Map<string, bigint>();
  if (size !== 'auto' && quality !== 'auto') return [`${size}/${quality}`, size, DEFAULT_IMAGE_TIER].find((tier) => tiers.has(tier));
  const matches = (tier: string): boolean => {
    if (tier === DEFAULT_IMAGE_TIER) return true;
    const [tierSize, tierQuality] = tier.split('/');
    return (size === 'auto' || tierSize === size) && (quality === 'auto' || tierQuality === undefined || tierQuality === quality);
  };
  let dearest: string | undefined;
  for (const [tier, price] of tiers) {
    if (matches(tier) && (dearest === undefined || price > (tiers.get(dearest) ?? 0n))) dearest = tier;
  }
  return dearest;
}

function dearestImagePrice(prices: ModelPrices): bigint {
  let dearest = 0n;
  for (const price of prices.perImage?.values() ?? []) if (price > dearest) dearest = price;
  return dearest;
}

function ceilDivide(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}
