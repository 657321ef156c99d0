import { describe, expect, it } from 'vitest';
import { formatResetDuration, rateLimitHeaders, retryAfterHeaders } from './headers.js';
import { createMemoryLimiter } from './memory-limiter.js';

describe('memory limiter', () => {
  it('admits exactly the limit per window, per subject', async () => {
    const limiter = createMemoryLimiter();
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await limiter.consume('key_a', 1, 3, 60));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
    expect(decisions[3]!.resetMs).toBeGreaterThan(0);
    expect((await limiter.consume('key_b', 1, 3, 60)).allowed).toBe(true);
  });

  it('keeps per-key overrides apart from the default', async () => {
    const limiter = createMemoryLimiter();
    expect((await limiter.consume('key_a', 1, 1, 60)).allowed).toBe(true);
    expect((await limiter.consume('key_a', 1, 1, 60)).allowed).toBe(false);
    expect((await limiter.consume('key_a', 1, 5, 60)).allowed).toBe(true);
  });

  it('weighs points (tokens)', async () => {
    const limiter = createMemoryLimiter();
    expect((await limiter.consume('k', 700, 1000, 60)).remaining).toBe(300);
    expect((await limiter.consume('k', 400, 1000, 60)).allowed).toBe(false);
    // The refused 400 were given back: the 300 left are still there.
    expect((await limiter.consume('k', 300, 1000, 60)).allowed).toBe(true);
  });

  it('reads a window without changing it when taking no points', async () => {
    const limiter = createMemoryLimiter();
    expect(await limiter.consume('k', 0, 2, 60)).toMatchObject({ allowed: true, remaining: 2 });
    expect((await limiter.consume('k', 1, 2, 60)).remaining).toBe(1);
    expect((await limiter.consume('k', 0, 2, 60)).remaining).toBe(1);
    expect((await limiter.consume('k', 1, 2, 60)).remaining).toBe(0);
    expect(await limiter.consume('k', 0, 2, 60)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.consume('k', 1, 2, 60)).allowed).toBe(false);
  });

  it('refused requests do not use up the window', async () => {
    const limiter = createMemoryLimiter();
    expect((await limiter.consume('k', 1, 2, 60)).allowed).toBe(true);
    expect((await limiter.consume('k', 1, 2, 60)).allowed).toBe(true);
    for (let i = 0; i < 5; i++) expect((await limiter.consume('k', 1, 2, 60)).allowed).toBe(false);
    expect((await limiter.consume('other', 1, 2, 60)).remaining).toBe(1);
  });
});

describe('rate-limit headers', () => {
  it('formats durations the way OpenAI does', () => {
    expect(formatResetDuration(120)).toBe('120ms');
    expect(formatResetDuration(1000)).toBe('1s');
    expect(formatResetDuration(360_000)).toBe('6m0s');
    expect(formatResetDuration(61_500)).toBe('1m2s');
  });

  it('writes the x-ratelimit and retry-after headers', () => {
    const decision = { allowed: false, limit: 10, remaining: 0, resetMs: 1500 };
    expect(rateLimitHeaders('requests', decision)).toEqual({
      'x-ratelimit-limit-requests': '10',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '2s',
    });
    expect(retryAfterHeaders(decision)).toEqual({ 'retry-after': '2', 'retry-after-ms': '1500' });
  });
});
