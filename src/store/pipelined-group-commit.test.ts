/**
 * The pipelined group commit on its own, with a `commit` whose flushes the test lets finish one by
 * one (the PostgreSQL store runs it for real: hold-batches.test.ts, store.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Outcome } from './group-commit.js';
import { PipelinedGroupCommit } from './pipelined-group-commit.js';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

function deferred(): Deferred {
  let resolve = () => undefined as void;
  let reject = (_error: Error) => undefined as void;
  const promise = new Promise<void>((done, fail) => {
    resolve = done;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** Halves numbers (odd ones fail alone); each batch's flush waits for the test. */
function halvingPipeline() {
  const batches: number[][] = [];
  const flushes: Deferred[] = [];
  const pipeline = new PipelinedGroupCommit<number, number>({
    maxBatchSize: 100,
    commit: async (operations) => {
      batches.push([...operations]);
      const flush = deferred();
      flushes.push(flush);
      const outcomes = operations.map((value): Outcome<number> => (value % 2 === 0 ? { ok: true, value: value / 2 } : { ok: false, error: new RangeError(`${value} is odd`) }));
      return { outcomes, durable: flush.promise };
    },
  });
  return { pipeline, batches, flushes };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Whether `promise` has settled by the end of the current turn. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await turn();
  return settled;
}

describe('PipelinedGroupCommit', () => {
  it('resolves an operation only once its transaction is durable', async () => {
    const { pipeline, flushes } = halvingPipeline();
    const result = pipeline.submit(8);
    await turn();
    expect(flushes).toHaveLength(1);
    expect(await isSettled(result)).toBe(false);
    flushes[0]!.resolve();
    expect(await result).toBe(4);
  });

  it('starts the next transaction as soon as the previous one has committed, before its flush', async () => {
    const { pipeline, batches, flushes } = halvingPipeline();
    const first = pipeline.submit(2);
    await turn();
    const second = pipeline.submit(4);
    await turn();
    expect(batches).toEqual([[2], [4]]);
    // The later flush may end first; each operation waits for its own.
    flushes[1]!.resolve();
    expect(await second).toBe(2);
    expect(await isSettled(first)).toBe(false);
    flushes[0]!.resolve();
    expect(await first).toBe(1);
  });

  it('rejects an operation that failed on its own at once, and every operation of a batch whose flush failed', async () => {
    const { pipeline, flushes } = halvingPipeline();
    const results = [2, 3, 4].map((value) => pipeline.submit(value));
    await expect(results[1]).rejects.toThrow(RangeError);
    const lost = new Error('connection lost before the flush');
    flushes[0]!.reject(lost);
    await expect(results[0]).rejects.toBe(lost);
    await expect(results[2]).rejects.toBe(lost);
  });

  it('close() waits for every queued operation and every flush, and refuses new ones', async () => {
    const { pipeline, flushes } = halvingPipeline();
    const result = pipeline.submit(6);
    await turn();
    const closed = pipeline.close();
    expect(await isSettled(closed)).toBe(false);
    await expect(pipeline.submit(2)).rejects.toThrow(/closed/);
    flushes[0]!.resolve();
    await closed;
    expect(await result).toBe(3);
  });
});
