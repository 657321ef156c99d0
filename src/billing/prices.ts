/**
 * Model prices in integer nano-USD per 1M tokens, converted once from the catalog's USD figures,
 * and the cost of one answer's usage. No floats: see money.ts.
 */
import type { ConfigFile } from '../config/schema.js';
import type { Usage } from '../protocol/canonical.js';
import { costOfTokens, usdToNanos } from './money.js';

/** Nano-USD per 1M tokens. */
export interface ModelPrices {
  inputPerMillion: bigint;
  /** Input tokens served from the upstream's prompt cache; the input price unless configured. */
  cachedInputPerMillion: bigint;
  /** Input tokens written to the upstream's prompt cache (Anthropic); absent: the input price. */
  cacheWritePerMillion?: bigint;
  /** Output tokens, reasoning included. */
  outputPerMillion: bigint;
}

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
        outputPerMillion: usdToNanos(model.prices.output),
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
  const freshInputTokens = usage.inputTokens - cachedInputTokens - cacheWriteInputTokens;
  return (
    costOfTokens(freshInputTokens, prices.inputPerMillion) +
    costOfTokens(cachedInputTokens, prices.cachedInputPerMillion) +
    costOfTokens(cacheWriteInputTokens, prices.cacheWritePerMillion ?? prices.inputPerMillion) +
    costOfTokens(usage.outputTokens, prices.outputPerMillion)
  );
}
