import { describe, expect, it } from 'vitest';
import { configFileSchema, type ConfigFile } from '../config/schema.js';
import { costOf, costOfUnits, imageTier, pricesFromConfig, type ModelPrices } from './prices.js';

function models(prices: Array<{ id: string; prices: Record<string, string | number> }>): ConfigFile['models'] {
  return configFileSchema.parse({
    providers: [{ name: 'sim', type: 'simulated' }],
    models: prices.map((model) => ({ ...model, targets: [{ provider: 'sim', model: 'upstream' }] })),
  }).models;
}

describe('pricesFromConfig', () => {
  it('converts USD per 1M tokens to nano-USD exactly, from strings and numbers', () => {
    const prices = pricesFromConfig(
      models([
        { id: 'a', prices: { input: '2.5', cached_input: 0.25, cache_write: '3.125', output: 10 } },
        { id: 'b', prices: { input: 0.1, output: '0.000000001' } },
      ]),
    );
    expect(prices.get('a')).toEqual({ inputPerMillion: 2_500_000_000n, cachedInputPerMillion: 250_000_000n, cacheWritePerMillion: 3_125_000_000n, outputPerMillion: 10_000_000_000n });
    expect(prices.get('b')).toEqual({ inputPerMillion: 100_000_000n, cachedInputPerMillion: 100_000_000n, cacheWritePerMillion: 100_000_000n, outputPerMillion: 1n });
    expect(prices.size).toBe(2);
  });

  it('defaults the cached price to the input price, but keeps an explicit zero', () => {
    const prices = pricesFromConfig(
      models([
        { id: 'default', prices: { input: '1.234567891', output: 2 } },
        { id: 'free-cache', prices: { input: 3, cached_input: 0, output: 4 } },
      ]),
    );
    expect(prices.get('default')?.cachedInputPerMillion).toBe(1_234_567_891n);
    expect(prices.get('free-cache')?.cachedInputPerMillion).toBe(0n);
  });
});

describe('costOf', () => {
  const prices: ModelPrices = { inputPerMillion: 2_500_000_000n, cachedInputPerMillion: 250_000_000n, outputPerMillion: 10_000_000_000n };

  it('bills fresh input, cached input and output (reasoning included) at their own prices', () => {
    const usage = { inputTokens: 1_000, cachedInputTokens: 400, outputTokens: 300, reasoningTokens: 100 };
    // 600 × 2500 + 400 × 250 + 300 × 10000 nanos; reasoning is part of the 300 output tokens.
    expect(costOf(usage, prices)).toBe(1_500_000n + 100_000n + 3_000_000n);
    expect(costOf({ ...usage, reasoningTokens: 0 }, prices)).toBe(4_600_000n);
  });

  it('rounds each part up to the nano', () => {
    const tiny: ModelPrices = { inputPerMillion: 7n, cachedInputPerMillion: 7n, outputPerMillion: 7n };
    // 21/1e6, 7/1e6 and 7/1e6 of a nano: each part rounds up to one.
    expect(costOf({ inputTokens: 4, cachedInputTokens: 1, outputTokens: 1, reasoningTokens: 0 }, tiny)).toBe(3n);
    const oneNano: ModelPrices = { inputPerMillion: 1n, cachedInputPerMillion: 1n, outputPerMillion: 1n };
    expect(costOf({ inputTokens: 1_000_000, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 }, oneNano)).toBe(1n);
    expect(costOf({ inputTokens: 1_000_001, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 }, oneNano)).toBe(2n);
    expect(costOf({ inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 }, prices)).toBe(0n);
  });

  it('bills cache writes at the cache-write price, and at the input price when none is set', () => {
    const withWrite: ModelPrices = { ...prices, cacheWritePerMillion: 3_125_000_000n };
    const usage = { inputTokens: 1_000, cachedInputTokens: 400, cacheWriteInputTokens: 500, outputTokens: 300, reasoningTokens: 0 };
    // 100 fresh × 2500 + 400 × 250 + 500 × 3125 + 300 × 10000 nanos.
    expect(costOf(usage, withWrite)).toBe(250_000n + 100_000n + 1_562_500n + 3_000_000n);
    expect(costOf(usage, prices)).toBe(250_000n + 100_000n + 1_250_000n + 3_000_000n);
    // More cache writes than uncached input: capped, never billed twice.
    expect(costOf({ ...usage, cacheWriteInputTokens: 5_000 }, withWrite)).toBe(100_000n + 1_875_000n + 3_000_000n);
  });

  it('never bills a cached token twice when the cached count exceeds the input count', () => {
    expect(costOf({ inputTokens: 10, cachedInputTokens: 50, outputTokens: 0, reasoningTokens: 0 }, prices)).toBe(2_500n);
  });

  it('refuses token counts that are negative or not integers', () => {
    expect(() => costOf({ inputTokens: -1, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 }, prices)).toThrow(RangeError);
    expect(() => costOf({ inputTokens: 1, cachedInputTokens: 0, outputTokens: 1.5, reasoningTokens: 0 }, prices)).toThrow(RangeError);
    expect(() => costOf({ inputTokens: Number.NaN, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 }, prices)).toThrow(RangeError);
  });
});

describe('units billed each', () => {
  const base: ModelPrices = { inputPerMillion: 5_000_000_000n, cachedInputPerMillion: 5_000_000_000n, outputPerMillion: 40_000_000_000n };
  const images: ModelPrices = {
    ...base,
    imageInputPerMillion: 10_000_000_000n,
    perImage: new Map([
      ['1024x1024/low', 11_000_000n],
      ['1024x1024/high', 167_000_000n],
      ['1536x1024', 250_000_000n],
      ['default', 40_000_000n],
    ]),
  };
  const zero = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 };

  it('finds an image tier by size and quality, then size, then default; the dearest that can match when the upstream chooses', () => {
    expect(imageTier(images, '1024x1024', 'low')).toBe('1024x1024/low');
    expect(imageTier(images, '1536x1024', 'high')).toBe('1536x1024');
    expect(imageTier(images, '1024x1536', 'medium')).toBe('default');
    expect(imageTier(images, '1024x1024', 'auto')).toBe('1024x1024/high');
    expect(imageTier(images, 'auto', 'auto')).toBe('1536x1024');
    expect(imageTier(base, '1024x1024', 'low')).toBeUndefined();
    expect(imageTier({ ...base, perImage: new Map([['1024x1024/low', 1n]]) }, '512x512', 'low')).toBeUndefined();
  });

  it('bills images at their tier, audio by the millisecond rounded up, characters per 1M (the input price without one)', () => {
    expect(costOfUnits({ images: 3, imageTier: '1024x1024/high' }, images)).toBe(501_000_000n);
    expect(costOf({ ...zero, units: { images: 2, imageTier: '1536x1024' } }, images)).toBe(500_000_000n);
    const audio: ModelPrices = { ...base, perAudioSecond: 100_000n };
    // 12.345 s at 100,000 nanos per second; 1 ms of a 3-nano-per-second price rounds up to a nano.
    expect(costOfUnits({ audioMilliseconds: 12_345 }, audio)).toBe(1_234_500n);
    expect(costOfUnits({ audioMilliseconds: 1 }, { ...base, perAudioSecond: 3n })).toBe(1n);
    expect(costOfUnits({ characters: 1_000 }, { ...base, perMillionCharacters: 15_000_000_000n })).toBe(15_000_000n);
    expect(costOfUnits({ characters: 1_000 }, base)).toBe(5_000_000n);
  });

  it('bills image input tokens at the image-input price, within the input count', () => {
    const usage = { inputTokens: 1_000, cachedInputTokens: 0, imageInputTokens: 600, outputTokens: 4_160, reasoningTokens: 0 };
    // 400 text × 5000 + 600 image × 10000 + 4160 × 40000 nanos.
    expect(costOf(usage, images)).toBe(2_000_000n + 6_000_000n + 166_400_000n);
    expect(costOf({ ...usage, imageInputTokens: 5_000 }, images)).toBe(10_000_000n + 166_400_000n);
  });
});
