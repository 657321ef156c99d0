import { describe, expect, it } from 'vitest';
import { countTextTokens } from '../protocol/tokens.js';
import { isSaneUsage, UsageMeter } from './usage-meter.js';

describe('UsageMeter', () => {
  it('prefers the usage the upstream reports', async () => {
    const meter = new UsageMeter(10);
    meter.observe({ type: 'text-delta', delta: 'Hello world' });
    const reported = { inputTokens: 12, cachedInputTokens: 4, outputTokens: 30, reasoningTokens: 8 };
    meter.observe({ type: 'usage', usage: reported });
    expect(await meter.usage()).toEqual(reported);
  });

  it('counts what streamed when the stream is cut short', async () => {
    const meter = new UsageMeter(10);
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(100);
    for (let index = 0; index < text.length; index += 7) meter.observe({ type: 'text-delta', delta: text.slice(index, index + 7) });
    meter.observe({ type: 'reasoning-delta', delta: 'thinking hard' });
    const usage = await meter.usage();
    expect(usage.inputTokens).toBe(10);
    expect(usage.reasoningTokens).toBe(countTextTokens('thinking hard'));
    // Batches are cut before a space, where o200k tokens begin: the count is the whole text's.
    expect(usage.outputTokens - usage.reasoningTokens).toBe(countTextTokens(text));
  });

  it('knows when nothing was produced', () => {
    const meter = new UsageMeter(10);
    meter.observe({ type: 'response-start', upstreamModel: 'x' });
    expect(meter.billable).toBe(false);
    meter.observe({ type: 'tool-call-start', index: 0, callId: 'c', name: 'weather' });
    expect(meter.billable).toBe(true);
  });
});

describe('the input, once the upstream accepted the request', () => {
  /** Work that counts to `tokens` in `slices` pauses, and says how often it was started. */
  const counting = (tokens: number, slices: number) => {
    const started = { times: 0 };
    const work = function* (): Generator<void, number> {
      started.times += 1;
      for (let slice = 0; slice < slices; slice += 1) yield;
      return tokens;
    };
    return { started, work };
  };

  it('is billed with no output at all, and not before the upstream accepted', async () => {
    const { work } = counting(97_512, 3);
    const meter = new UsageMeter(work);
    expect(meter.billable).toBe(false);
    expect(meter.metered().inputTokens).toBe(0);
    meter.accepted();
    expect(meter.billable).toBe(true);
    expect(await meter.usage()).toEqual({ inputTokens: 97_512, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 });
  });

  it('is counted once, in the background, when a checkpoint asks for it; never when a sane report came', async () => {
    const { started, work } = counting(500, 2);
    const meter = new UsageMeter(work);
    expect(meter.checkpoint().inputTokens).toBe(0);
    expect(started.times).toBe(0);
    meter.accepted();
    meter.observe({ type: 'text-delta', delta: 'Hello' });
    // The first checkpoint after the upstream accepted starts the count; a later one carries it.
    expect(meter.checkpoint().inputTokens).toBe(0);
    await expect.poll(() => meter.checkpoint().inputTokens).toBe(500);
    expect((await meter.usage()).inputTokens).toBe(500);
    expect(started.times).toBe(1);

    const reported = counting(500, 2);
    const answered = new UsageMeter(reported.work);
    answered.accepted();
    answered.observe({ type: 'usage', usage: { inputTokens: 7, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0 } });
    answered.checkpoint();
    expect((await answered.usage()).inputTokens).toBe(7);
    expect(reported.started.times).toBe(0);
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
  ])('bill the metered count instead of a %s report', async (_name, report) => {
    const meter = new UsageMeter(42);
    const output = streamed(meter);
    meter.observe({ type: 'usage', usage: report });
    expect(isSaneUsage(report)).toBe(false);
    expect(meter.rejectedReport).toBe(true);
    expect(await meter.usage()).toEqual({ inputTokens: 42, cachedInputTokens: 0, outputTokens: output, reasoningTokens: 0 });
  });

  it('keeps a sane report, however large, for the hold to cap', async () => {
    const meter = new UsageMeter(42);
    streamed(meter);
    const report = { inputTokens: 4_200, cachedInputTokens: 0, outputTokens: 3, reasoningTokens: 0 };
    meter.observe({ type: 'usage', usage: report });
    expect(meter.rejectedReport).toBe(false);
    expect(await meter.usage()).toEqual(report);
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
