import { describe, expect, it } from 'vitest';
import { countTextTokens } from '../protocol/tokens.js';
import { isSaneUsage, UsageMeter } from './usage-meter.js';

describe('UsageMeter', () => {
  it('prefers the usage the upstream reports', () => {
    const meter = new UsageMeter(10);
    meter.observe({ type: 'text-delta', delta: 'Hello world' });
    const reported = { inputTokens: 12, cachedInputTokens: 4, outputTokens: 30, reasoningTokens: 8 };
    meter.observe({ type: 'usage', usage: reported });
    expect(meter.usage()).toEqual(reported);
  });

  it('counts what streamed when the stream is cut short', () => {
    const meter = new UsageMeter(10);
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(100);
    for (let index = 0; index < text.length; index += 7) meter.observe({ type: 'text-delta', delta: text.slice(index, index + 7) });
    meter.observe({ type: 'reasoning-delta', delta: 'thinking hard' });
    const usage = meter.usage();
    expect(usage.inputTokens).toBe(10);
    expect(usage.reasoningTokens).toBe(countTextTokens('thinking hard'));
    // Batches are cut before a space, where o200k tokens begin: the count is the whole text's.
    expect(usage.outputTokens - usage.reasoningTokens).toBe(countTextTokens(text));
  });

  it('knows when nothing was produced', () => {
    const meter = new UsageMeter(10);
    meter.observe({ type: 'response-start', upstreamModel: 'x' });
    expect(meter.producedAnything).toBe(false);
    meter.observe({ type: 'tool-call-start', index: 0, callId: 'c', name: 'weather' });
    expect(meter.producedAnything).toBe(true);
  });
});

describe('usage reports that fail the sanity check', () => {
  const streamed = (meter: UsageMeter) => {
    meter.observe({ type: 'text-delta', delta: 'one two three four five six seven ' });
    return countTextTokens('one two three four five six seven ');
  };

  it.each([
    ['absurd', { inputTokens: 1e12, cachedInputTokens: 0, outputTokens: 1e12, reasoningTokens: 0 }],
    ['negative (read as NaN by the providers)', { inputTokens: Number.NaN, cachedInputTokens: 0, outputTokens: -5, reasoningTokens: 0 }],
    ['fractional', { inputTokens: 1.5, cachedInputTokens: 0, outputTokens: 2, reasoningTokens: 0 }],
  ])('bill the metered count instead of a %s report', (_name, report) => {
    const meter = new UsageMeter(42);
    const output = streamed(meter);
    meter.observe({ type: 'usage', usage: report });
    expect(isSaneUsage(report)).toBe(false);
    expect(meter.rejectedReport).toBe(true);
    expect(meter.usage()).toEqual({ inputTokens: 42, cachedInputTokens: 0, outputTokens: output, reasoningTokens: 0 });
  });

  it('keeps a sane report, however large, for the hold to cap', () => {
    const meter = new UsageMeter(42);
    streamed(meter);
    const report = { inputTokens: 4_200, cachedInputTokens: 0, outputTokens: 3, reasoningTokens: 0 };
    meter.observe({ type: 'usage', usage: report });
    expect(meter.rejectedReport).toBe(false);
    expect(meter.usage()).toEqual(report);
  });

  it('stops counting once the output reaches what the hold covers', () => {
    const meter = new UsageMeter(1, 10);
    for (let index = 0; index < 1_000; index += 1) meter.observe({ type: 'text-delta', delta: 'word '.repeat(60) });
    const { outputTokens } = meter.metered();
    expect(outputTokens).toBeGreaterThanOrEqual(10);
    expect(outputTokens).toBeLessThan(200);
  });

  it('counts a stream of one letter repeated in linear time (bounded by its bytes)', () => {
    const meter = new UsageMeter(1);
    for (let index = 0; index < 1_024; index += 1) meter.observe({ type: 'text-delta', delta: 'a'.repeat(256) });
    expect(meter.metered().outputTokens).toBe(262_144);
  });
});
