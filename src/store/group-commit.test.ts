/**
 * The group commit queue on its own, with a `commit` that records each batch it is given and
 * decides outcomes the way a database would (the store's own suites run it on SQLite and
 * PostgreSQL: hold-batches.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { GroupCommit, type Outcome } from './group-commit.js';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve = () => undefined as void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** A commit that halves numbers: odd ones fail alone, and `gate`, while set, holds the transaction open. */
function halvingQueue(options: { maxBatchSize?: number; onCommit?: (size: number) => void } = {}) {
  const batches: number[][] = [];
  /** Each batch's `underLoad`, in order. */
  const loads: boolean[] = [];
  const state: { gate: Deferred | undefined; failNext: Error | undefined } = { gate: undefined, failNext: undefined };
  const queue = new GroupCommit<number, number>({
    maxBatchSize: options.maxBatchSize ?? 100,
    onCommit: options.onCommit,
    commit: async (operations, underLoad) => {
      batches.push([...operations]);
      loads.push(underLoad);
      if (state.gate !== undefined) await state.gate.promise;
      if (state.failNext !== undefined) {
        const error = state.failNext;
        state.failNext = undefined;
        throw error;
      }
      return operations.map((value): Outcome<number> => (value % 2 === 0 ? { ok: true, value: value / 2 } : { ok: false, error: new RangeError(`${value} is odd`) }));
    },
  });
  return { queue, batches, loads, state };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('writes what one event-loop turn submitted in one transaction, each operation with its own result', async () => {
    const { queue, batches } = halvingQueue();
    const results = await Promise.all([2, 4, 6, 8].map((value) => queue.submit(value)));
    expect(results).toEqual([1, 2, 3, 4]);
    expect(batches).toEqual([[2, 4, 6, 8]]);
  });

  it('does not wait for a timer: a lone operation is written at the end of its turn', async () => {
    const { queue, batches } = halvingQueue();
    const result = queue.submit(10);
    expect(batches).toEqual([]);
    await turn();
    expect(batches).toEqual([[10]]);
    expect(await result).toBe(5);
  });

  it('tells a batch whether it was formed while another ran (under load) or started from an idle queue', async () => {
    const { queue, batches, loads, state } = halvingQueue();
    state.gate = deferred();
    const first = queue.submit(2);
    await turn();
    const behind = [queue.submit(4), queue.submit(6)];
    state.gate.resolve();
    state.gate = undefined;
    await Promise.all([first, ...behind]);
    expect(batches).toEqual([[2], [4, 6]]);
    expect(loads).toEqual([false, true]);
    // Idle again: the next batch starts from an idle queue.
    await queue.submit(8);
    expect(loads).toEqual([false, true, false]);
  });

  it('rejects only the operation that failed; the others in its transaction keep their results', async () => {
    const { queue, batches } = halvingQueue();
    const settled = await Promise.allSettled([2, 3, 4].map((value) => queue.submit(value)));
    expect(batches).toHaveLength(1);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: 1 });
    expect(settled[1]).toMatchObject({ status: 'rejected', reason: new RangeError('3 is odd') });
    expect(settled[2]).toEqual({ status: 'fulfilled', value: 2 });
  });

  it('while a transaction runs, new operations wait and go together the moment it ends', async () => {
    const { queue, batches, state } = halvingQueue();
    state.gate = deferred();
    const first = queue.submit(2);
    await turn();
    expect(batches).toEqual([[2]]);
    const later = [4, 6, 8].map((value) => queue.submit(value));
    await turn();
    await turn();
    // Still one transaction: the others are waiting for it.
    expect(batches).toEqual([[2]]);
    const gate = state.gate;
    state.gate = undefined;
    gate.resolve();
    expect(await first).toBe(1);
    expect(await Promise.all(later)).toEqual([2, 3, 4]);
    expect(batches).toEqual([[2], [4, 6, 8]]);
  });

  it('resolves an operation only once its transaction has committed', async () => {
    const { queue, state } = halvingQueue();
    state.gate = deferred();
    let resolved = false;
    const result = queue.submit(2).then(() => (resolved = true));
    for (let i = 0; i < 5; i++) await turn();
    expect(resolved).toBe(false);
    state.gate.resolve();
    await result;
    expect(resolved).toBe(true);
  });

  it('puts at most maxBatchSize operations in one transaction', async () => {
    const { queue, batches } = halvingQueue({ maxBatchSize: 3 });
    const results = await Promise.all([2, 4, 6, 8, 10, 12, 14].map((value) => queue.submit(value)));
    expect(results).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(batches).toEqual([[2, 4, 6], [8, 10, 12], [14]]);
  });

  it('rejects every operation of a transaction that failed, and goes on with the next ones', async () => {
    const { queue, state } = halvingQueue();
    const away = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    state.failNext = away;
    const settled = await Promise.allSettled([2, 4].map((value) => queue.submit(value)));
    expect(settled).toEqual([
      { status: 'rejected', reason: away },
      { status: 'rejected', reason: away },
    ]);
    expect(await queue.submit(6)).toBe(3);
  });

  it('rejects the whole batch when the commit answers for a different number of operations', async () => {
    const queue = new GroupCommit<number, number>({ maxBatchSize: 10, commit: async () => [{ ok: true, value: 1 }] });
    const settled = await Promise.allSettled([1, 2].map((value) => queue.submit(value)));
    expect(settled.map((each) => each.status)).toEqual(['rejected', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason).toMatchObject({ message: expect.stringContaining('1 outcomes for 2 operations') });
  });

  it('tells onCommit the size of each committed batch, and goes on if it throws', async () => {
    const sizes: number[] = [];
    const { queue } = halvingQueue({
      onCommit: (size) => {
        sizes.push(size);
        throw new Error('a broken counter');
      },
    });
    await Promise.all([2, 4, 6].map((value) => queue.submit(value)));
    expect(await queue.submit(8)).toBe(4);
    expect(sizes).toEqual([3, 1]);
  });

  it('on close, writes what is queued, then refuses new operations', async () => {
    const { queue, batches, state } = halvingQueue();
    state.gate = deferred();
    const running = queue.submit(2);
    await turn();
    const queued = queue.submit(4);
    const closing = queue.close();
    await expect(queue.submit(6)).rejects.toThrow('the store is closed');
    state.gate.resolve();
    state.gate = undefined;
    await closing;
    expect(await running).toBe(1);
    expect(await queued).toBe(2);
    expect(batches).toEqual([[2], [4]]);
  });

  it('refuses a batch size that is not a positive integer', () => {
    for (const maxBatchSize of [0, -1, 1.5, Number.NaN]) {
      expect(() => new GroupCommit<number, number>({ maxBatchSize, commit: async () => [] })).toThrow(RangeError);
    }
  });
});
