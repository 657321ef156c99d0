import { describe, expect, it } from 'vitest';
import { countTextTokens } from '../protocol/tokens.js';
import { UsageMeter } from './usage-meter.js';

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
