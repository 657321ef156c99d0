import { describe, expect, it } from 'vitest';
import { inExportTurn } from './export-turns.js';

/** Holds the event loop for `ms`, as a synchronous SQLite query does. */
function holdLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

describe('export turns', () => {
  it('runs one page at a time, oldest waiter first, each followed by a pause at least as long as it took', async () => {
    const spans: Array<{ name: string; start: number; end: number }> = [];
    const page = (name: string) =>
      inExportTurn(async () => {
        const start = performance.now();
        holdLoop(20);
        spans.push({ name, start, end: performance.now() });
        return name;
      });
    expect(await Promise.all([page('a1'), page('b1'), page('c1'), page('a2')])).toEqual(['a1', 'b1', 'c1', 'a2']);
    expect(spans.map((span) => span.name)).toEqual(['a1', 'b1', 'c1', 'a2']);
    for (let index = 1; index < spans.length; index += 1) {
      const previous = spans[index - 1]!;
      const current = spans[index]!;
      // The loop was free for at least as long as the page before held it (timers round to 1 ms).
      expect(current.start - previous.end).toBeGreaterThanOrEqual(previous.end - previous.start - 1);
    }
  });

  it('lets timers and I/O of other requests run between two pages', async () => {
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 1);
    try {
      const seen: number[] = [];
      await Promise.all(
        Array.from({ length: 5 }, () =>
          inExportTurn(async () => {
            seen.push(ticks);
            holdLoop(10);
          }),
        ),
      );
      // Every page after the first saw the interval fire since the page before it.
      for (let index = 1; index < seen.length; index += 1) expect(seen[index]).toBeGreaterThan(seen[index - 1]!);
    } finally {
      clearInterval(ticker);
    }
  });

  it('frees the turn when a page fails, and passes the failure on', async () => {
    await expect(inExportTurn(async () => Promise.reject(new Error('database away')))).rejects.toThrow('database away');
    expect(await inExportTurn(async () => 'next')).toBe('next');
  });
});
