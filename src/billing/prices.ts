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
        outputPerMillion: usdToNanos(model.prices.output),
      }),
    );
  }
  return prices;
}

/**
 * The cost of `usage` in nano-USD: non-cached input at the input price, cached input at the cached
 * price, output (which already includes reasoning) at the output price; each part rounded up to
 * the nano, then summed. A cached count above the input count (a confused upstream) is capped at
 * the input count, so no token is billed twice.
 */
export function costOf(usage: Usage, prices: ModelPrices): bigint {
  const cachedInputTokens = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const freshInputTokens = usage.inputTokens - cachedInputTokens;
  return (
    costOfTokens(freshInputTokens, prices.inputPerMillion) +
    costOfTokens(cachedInputTokens, prices.cachedInputPerMillion) +
    costOfTokens(usage.outputTokens, prices.outputPerMillion)
  );
}
