import { describe, expect, it } from 'vitest';
import { PAUSE_AFTER_MS, runYielding } from './run-yielding.js';

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Counts the turns of the loop that other work gets while `run` goes on, and the longest gap. */
async function turnsDuring(run: Promise<unknown>): Promise<{ turns: number; longestGapMs: number }> {
  let done = false;
  let turns = 0;
  let longestGapMs = 0;
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
    turns += 1;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  await run;
  done = true;
  return { turns, longestGapMs };
}

describe('runYielding', () => {
  it('returns what the work returns', async () => {
    function* work(): Generator<void, number> {
      yield;
      yield;
      return 42;
    }
    expect(await runYielding(work())).toBe(42);
  });

  it('pauses once slow slices have run PAUSE_AFTER_MS: no other work waits much longer than that', async () => {
    function* slow(): Generator<void, string> {
      for (let slice = 0; slice < 40; slice += 1) {
        busy(2);
        yield;
      }
      return 'done';
    }
    const { turns, longestGapMs } = await turnsDuring(runYielding(slow()));
    // 80 ms of work in turns of about PAUSE_AFTER_MS (plus one slice).
    expect(turns).toBeGreaterThanOrEqual(80 / (PAUSE_AFTER_MS + 2) - 1);
    expect(longestGapMs).toBeLessThan(PAUSE_AFTER_MS + 2 + 20);
  });

  it('does not pause between fast slices', async () => {
    function* fast(): Generator<void, number> {
      let sum = 0;
      for (let slice = 0; slice < 10_000; slice += 1) {
        sum += slice;
        yield;
      }
      return sum;
    }
    const { turns } = await turnsDuring(runYielding(fast()));
    // 10,000 yields in well under PAUSE_AFTER_MS: at most a few pauses, not thousands.
    expect(turns).toBeLessThan(50);
  });
});
