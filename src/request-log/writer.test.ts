import { describe, expect, it, vi } from 'vitest';
import type { RequestLogEntry } from '../store/store.js';
import { RequestLogWriter } from './writer.js';

function row(index: number): RequestLogEntry {
  return {
    at: new Date(1_900_000_000_000 + index),
    requestId: `req_${index}`,
    accountId: 'acct_1',
    keyId: 'key_1',
    surface: 'chat-completions',
    model: 'model-a',
    target: null,
    status: 200,
    errorCode: null,
    stream: false,
    latencyMs: 1,
    firstByteMs: null,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    costNanos: 0n,
    requestBody: null,
    responseBody: null,
  };
}

/** A sink standing in for the database: keeps each batch, can be made to fail or to hang. */
function sink() {
  const batches: string[][] = [];
  let failing = false;
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  return {
    batches,
    write: async (entries: readonly RequestLogEntry[]) => {
      if (gate !== undefined) await gate;
      if (failing) throw new Error('database away');
      batches.push(entries.map((entry) => entry.requestId));
    },
    fail(value: boolean) {
      failing = value;
    },
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release() {
      gate = undefined;
      open?.();
    },
    written: () => batches.flat(),
  };
}

describe('RequestLogWriter', () => {
  it('queues without writing, then writes the rows of a burst as one batch', async () => {
    const database = sink();
    const writer = new RequestLogWriter({ write: database.write, flushDelayMs: 5 });
    for (let index = 0; index < 3; index += 1) writer.record(row(index));
    expect(database.batches).toEqual([]);
    expect(writer.queued).toBe(3);
    await vi.waitFor(() => expect(database.batches).toEqual([['req_0', 'req_1', 'req_2']]));
    expect(writer.queued).toBe(0);
  });

  it('writes at once when a batch is full, without waiting for the delay, never more than batchRows in one write', async () => {
    const database = sink();
    const writer = new RequestLogWriter({ write: database.write, batchRows: 2, flushDelayMs: 3_600_000 });
    for (let index = 0; index < 5; index += 1) writer.record(row(index));
    // A full batch goes at once; what queued behind it follows as soon as it ends.
    await vi.waitFor(() => expect(database.written()).toEqual(['req_0', 'req_1', 'req_2', 'req_3', 'req_4']));
    expect(database.batches).toEqual([['req_0', 'req_1'], ['req_2', 'req_3'], ['req_4']]);
    // A lone row waits for company (or the delay, or close).
    writer.record(row(5));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(writer.queued).toBe(1);
    await writer.close();
    expect(database.written()).toHaveLength(6);
  });

  it('while a write runs, the next rows queue and go in one write as soon as it ends', async () => {
    const database = sink();
    const writer = new RequestLogWriter({ write: database.write, flushDelayMs: 1 });
    database.hold();
    writer.record(row(0));
    await vi.waitFor(() => expect(writer.queued).toBe(0));
    for (let index = 1; index <= 4; index += 1) writer.record(row(index));
    expect(writer.queued).toBe(4);
    database.release();
    await vi.waitFor(() => expect(database.batches).toEqual([['req_0'], ['req_1', 'req_2', 'req_3', 'req_4']]));
  });

  it('keeps a bounded queue while the database is away, drops and counts the rest, and writes the kept rows in order once it is back', async () => {
    const database = sink();
    let dropped = 0;
    const errors: number[] = [];
    let recovered = 0;
    const writer = new RequestLogWriter({
      write: database.write,
      batchRows: 2,
      maxQueuedRows: 4,
      flushDelayMs: 1,
      retryFirstMs: 5,
      retryMaxMs: 20,
      onDrop: (rows) => (dropped += rows),
      onError: (_error, rows) => errors.push(rows),
      onRecovered: () => (recovered += 1),
    });
    database.fail(true);
    for (let index = 0; index < 10; index += 1) writer.record(row(index));
    // The bound holds the queue; one batch more may be in a write at the time.
    expect(writer.queued).toBeLessThanOrEqual(4);
    await vi.waitFor(() => expect(errors.length).toBeGreaterThanOrEqual(2));
    expect(writer.queued).toBe(4);
    expect(dropped).toBe(6);
    expect(database.batches).toEqual([]);
    database.fail(false);
    await vi.waitFor(() => expect(database.written()).toEqual(['req_0', 'req_1', 'req_2', 'req_3']));
    expect(recovered).toBe(1);
    expect(dropped).toBe(6);
  });

  it('close writes everything queued, and a failed final write is dropped and counted, not retried for ever', async () => {
    const database = sink();
    let dropped = 0;
    const writer = new RequestLogWriter({ write: database.write, batchRows: 3, flushDelayMs: 3_600_000, onDrop: (rows) => (dropped += rows) });
    writer.record(row(0));
    writer.record(row(1));
    await writer.close();
    expect(database.batches).toEqual([['req_0', 'req_1']]);

    const away = sink();
    const closing = new RequestLogWriter({ write: away.write, batchRows: 3, flushDelayMs: 3_600_000, retryFirstMs: 3_600_000, onDrop: (rows) => (dropped += rows) });
    away.fail(true);
    for (let index = 0; index < 5; index += 1) closing.record(row(index));
    // The first full batch failed and waits for a retry an hour away; close does not wait for it.
    await vi.waitFor(() => expect(closing.queued).toBe(5));
    await closing.close();
    expect(dropped).toBe(5);
    expect(closing.queued).toBe(0);
  });

  it('close waits for a write under way', async () => {
    const database = sink();
    const writer = new RequestLogWriter({ write: database.write, flushDelayMs: 1 });
    database.hold();
    writer.record(row(0));
    await vi.waitFor(() => expect(writer.queued).toBe(0));
    writer.record(row(1));
    const closed = writer.close();
    let done = false;
    void closed.then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(done).toBe(false);
    database.release();
    await closed;
    expect(database.batches).toEqual([['req_0'], ['req_1']]);
  });
});
