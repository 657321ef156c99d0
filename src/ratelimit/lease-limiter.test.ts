/**
 * Leases of a shared window (createLeaseLimiter) over the cluster primary's in-memory windows:
 * each limiter stands for one process, one `MemoryWindows` for the store they share. Every take
 * the store answers is counted.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryWindows } from './cluster-limiter.js';
import { createLeaseLimiter, grantFrom, LEASE, type LimitDecision, type Limiter, type TakeRequest, type WindowStore } from './limiter.js';

interface CountedStore extends WindowStore {
  takes: TakeRequest[];
  gives: number[];
  failing: boolean;
  /** Runs as the store receives a take (before it answers). */
  onTake?: () => void;
}

function sharedStore(): { windows: MemoryWindows; process: () => { limiter: Limiter; store: CountedStore } } {
  const windows = new MemoryWindows();
  return {
    windows,
    process() {
      const store: CountedStore = {
        takes: [],
        gives: [],
        failing: false,
        take(key, request) {
          if (store.failing) return Promise.reject(new Error('store away'));
          if (request.least > 0) store.takes.push(request);
          store.onTake?.();
          return windows.take(key, request);
        },
        give(key, points, window) {
          store.gives.push(points);
          return windows.give(key, points, window);
        },
        close: () => Promise.resolve(),
      };
      const limiter = createLeaseLimiter(store);
      opened.push(limiter);
      return { limiter, store };
    },
  };
}

/** What the shared window has left, as a process holding no lease reads it. */
async function leftIn(windows: MemoryWindows, subject: string, limit: number): Promise<number> {
  return windows.takeNow(`${limit}/60:${subject}`, { least: 0, need: 0, spare: 0, limit, windowMs: 60_000 }).left;
}

const opened: Limiter[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((limiter) => limiter.close()));
  vi.useRealTimers();
});

const allowed = (decisions: LimitDecision[]) => decisions.filter((decision) => decision.allowed);

describe('the grant rule', () => {
  it('grants nothing below the least useful, the need out of what is left, spare out of a quarter of the rest', () => {
    expect(grantFrom(4, { least: 5, need: 5, spare: 10 })).toBe(0);
    expect(grantFrom(4, { least: 1, need: 9, spare: 10 })).toBe(4);
    expect(grantFrom(100, { least: 1, need: 20, spare: 10 })).toBe(30);
    expect(grantFrom(100, { least: 1, need: 20, spare: 50 })).toBe(40);
    expect(grantFrom(23, { least: 1, need: 20, spare: 50 })).toBe(20);
    expect(grantFrom(7, { least: 0, need: 0, spare: 0 })).toBe(0);
  });
});

describe('leases of a shared window', () => {
  it('takes exactly what the first request needs, then leases ahead as requests keep coming', async () => {
    const { windows, process } = sharedStore();
    const { limiter, store } = process();
    const decisions: LimitDecision[] = [];
    for (let index = 0; index < 100; index++) decisions.push(await limiter.consume('k', 1, 6_400, 60));
    expect(allowed(decisions)).toHaveLength(100);
    // In one process the headers are exact, leased or not.
    expect(decisions.map((decision) => decision.remaining)).toEqual(Array.from({ length: 100 }, (_, index) => 6_399 - index));
    expect(store.takes[0]).toMatchObject({ need: 1, spare: 0 });
    expect(store.takes.length).toBeLessThan(12);
    // The window counts what was admitted plus this process's unspent lease, no more.
    const unspent = store.takes.reduce((sum, take) => sum + take.need + take.spare, 0) - 100;
    expect(await leftIn(windows, 'k', 6_400)).toBeGreaterThanOrEqual(6_300 - unspent);
    expect(unspent).toBeLessThanOrEqual(Math.floor(6_400 / LEASE.limitShare));
  });

  it('serves a concurrent burst with a couple of takes, every admission on its own slot', async () => {
    const { process } = sharedStore();
    const { limiter, store } = process();
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.consume('k', 1, 1_000, 60)));
    expect(allowed(decisions)).toHaveLength(100);
    expect(decisions.map((decision) => decision.remaining).sort((a, b) => b - a)).toEqual(Array.from({ length: 100 }, (_, index) => 999 - index));
    expect(store.takes).toHaveLength(2);
  });

  it('is exact near the limit: two processes never admit more than the window, and spend it all', async () => {
    const { windows, process } = sharedStore();
    const first = process();
    const second = process();
    const decisions: LimitDecision[] = [];
    // Alternating bursts from both, well past the limit of 640 (10 points may be leased ahead).
    for (let round = 0; round < 20; round++) {
      const burst = [first, second].flatMap(({ limiter }) => Array.from({ length: 25 }, () => limiter.consume('k', 1, 640, 60)));
      decisions.push(...(await Promise.all(burst)));
    }
    expect(allowed(decisions)).toHaveLength(640);
    expect(await leftIn(windows, 'k', 640)).toBe(0);
  });

  it('leases nothing ahead for a limit under 64: every request is the store’s decision', async () => {
    const { windows, process } = sharedStore();
    const { limiter, store } = process();
    for (let index = 0; index < 20; index++) await limiter.consume('k', 1, 50, 60);
    expect(store.takes.every((take) => take.spare === 0)).toBe(true);
    expect(store.takes).toHaveLength(20);
    expect(await leftIn(windows, 'k', 50)).toBe(30);
  });

  it('weighs points: a request too big for what is left is refused and takes nothing, a smaller one fits', async () => {
    const { windows, process } = sharedStore();
    const first = process();
    const second = process();
    expect(await first.limiter.consume('tok', 700, 1_000, 60)).toMatchObject({ allowed: true, remaining: 300 });
    expect(await second.limiter.consume('tok', 400, 1_000, 60)).toMatchObject({ allowed: false, remaining: 0 });
    expect(await leftIn(windows, 'tok', 1_000)).toBe(300);
    expect(await second.limiter.consume('tok', 300, 1_000, 60)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await first.limiter.consume('tok', 1, 1_000, 60)).toMatchObject({ allowed: false });
  });

  it('gives unspent points back when the lease sits idle, and on close', async () => {
    vi.useFakeTimers();
    const { windows, process } = sharedStore();
    const first = process();
    for (let index = 0; index < 30; index++) await first.limiter.consume('k', 1, 6_400, 60);
    const leftWithLease = await leftIn(windows, 'k', 6_400);
    expect(leftWithLease).toBeLessThan(6_400 - 30);
    await vi.advanceTimersByTimeAsync(LEASE.idleMs + LEASE.sweepMs);
    expect(first.store.gives).toHaveLength(1);
    expect(await leftIn(windows, 'k', 6_400)).toBe(6_400 - 30);

    const second = process();
    for (let index = 0; index < 30; index++) await second.limiter.consume('k', 1, 6_400, 60);
    expect(await leftIn(windows, 'k', 6_400)).toBeLessThan(6_400 - 60);
    await second.limiter.close();
    expect(await leftIn(windows, 'k', 6_400)).toBe(6_400 - 60);
  });

  it('renews a busy lease at least every LEASE.maxAgeMs, so its headers are never older', async () => {
    vi.useFakeTimers();
    const { process } = sharedStore();
    const first = process();
    const second = process();
    // 100 requests leave the first process a lease of about 90 points, more than it spends below.
    for (let index = 0; index < 100; index++) await first.limiter.consume('k', 1, 6_400, 60);
    // Another process spends 1,000 points meanwhile; the first keeps spending its lease slowly.
    await Promise.all(Array.from({ length: 1_000 }, () => second.limiter.consume('k', 1, 6_400, 60)));
    let last: LimitDecision | undefined;
    for (let step = 0; step < 10; step++) {
      await vi.advanceTimersByTimeAsync(LEASE.maxAgeMs / 5);
      last = await first.limiter.consume('k', 1, 6_400, 60);
    }
    // Renewed within the second: it now sees the other process's spending.
    expect(last!.remaining).toBeLessThan(6_400 - 1_100);
  });

  it('reads the shared window, this process’s unspent lease included, without taking from it', async () => {
    const { process } = sharedStore();
    const first = process();
    const second = process();
    for (let index = 0; index < 30; index++) await first.limiter.consume('k', 1, 6_400, 60);
    expect(await first.limiter.consume('k', 0, 6_400, 60)).toMatchObject({ allowed: true, remaining: 6_370 });
    await second.limiter.consume('k', 5, 6_400, 60);
    expect((await first.limiter.consume('k', 0, 6_400, 60)).remaining).toBe(6_365);
  });

  it('does not carry a lease into the next window', async () => {
    vi.useFakeTimers();
    const { windows, process } = sharedStore();
    const { limiter } = process();
    for (let index = 0; index < 30; index++) await limiter.consume('k', 1, 6_400, 60);
    // The clock passes the window's end before any sweep could give the lease back.
    vi.setSystemTime(Date.now() + 60_000);
    expect(await limiter.consume('k', 1, 6_400, 60)).toMatchObject({ allowed: true, remaining: 6_399 });
    expect(await leftIn(windows, 'k', 6_400)).toBe(6_399);
  });

  it('asks again when the window ended under a take that counted on the lease', async () => {
    vi.useFakeTimers();
    const { windows, process } = sharedStore();
    const { limiter, store } = process();
    const opened = Date.now();
    // A lease of 3 spare points (limit 256: at most 4 leased ahead).
    for (let index = 0; index < 4; index++) await limiter.consume('k', 1, 256, 60);
    // Quiet for a while (no timer runs: the lease stays), then the window ends while the store takes.
    vi.setSystemTime(Date.now() + 1_200);
    store.onTake = () => {
      store.onTake = undefined;
      vi.setSystemTime(opened + 60_001);
    };
    expect(await limiter.consume('k', 10, 256, 60)).toMatchObject({ allowed: true, remaining: 246 });
    expect(await leftIn(windows, 'k', 256)).toBe(246);
  });

  it('gives back what a refusing process held, so another process can use it', async () => {
    const { process } = sharedStore();
    const first = process();
    const second = process();
    expect(await first.limiter.consume('tok', 700, 1_000, 60)).toMatchObject({ allowed: true, remaining: 300 });
    // Leased ahead: 200 and 15 spare (1,000 / 64), 85 left in the window.
    expect(await first.limiter.consume('tok', 200, 1_000, 60)).toMatchObject({ allowed: true, remaining: 100 });
    expect(await first.limiter.consume('tok', 250, 1_000, 60)).toMatchObject({ allowed: false });
    expect(await second.limiter.consume('tok', 100, 1_000, 60)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('fails every waiting request at once when the store fails, and takes afresh once it answers', async () => {
    const { windows, process } = sharedStore();
    const { limiter, store } = process();
    for (let index = 0; index < 30; index++) await limiter.consume('other', 1, 6_400, 60);
    for (let index = 0; index < 30; index++) await limiter.consume('k', 1, 6_400, 60);
    const leftBefore = await leftIn(windows, 'k', 6_400);
    store.failing = true;
    // The lease may still cover a few: drain it, then every request waiting on the failed take fails.
    const results = await Promise.allSettled(Array.from({ length: 200 }, () => limiter.consume('k', 1, 6_400, 60)));
    const failed = results.filter((result) => result.status === 'rejected');
    expect(failed.length).toBeGreaterThan(100);
    expect(String((failed[0] as PromiseRejectedResult).reason)).toContain('store away');
    // Every lease was dropped with the failure: the next decision on any subject is the store's.
    await expect(limiter.consume('other', 1, 6_400, 60)).rejects.toThrow('store away');
    store.failing = false;
    expect(await limiter.consume('k', 1, 6_400, 60)).toMatchObject({ allowed: true });
    // Counted in the shared window again.
    expect(await leftIn(windows, 'k', 6_400)).toBeLessThan(leftBefore);
  });
});
