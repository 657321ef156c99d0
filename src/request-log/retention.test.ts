import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/open-store.js';
import type { RequestLogEntry, OperationsStore } from '../store/store.js';
import { capUtf8 } from './entry.js';
import { RequestLogRetention } from './retention.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2030, 5, 1);

function row(requestId: string, at: number): RequestLogEntry {
  return {
    at: new Date(at), requestId, accountId: 'acct_1', keyId: 'key_1', surface: 'responses', model: 'model-a', target: null, status: 200, errorCode: null,
    stream: false, latencyMs: 1, firstByteMs: null, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, costNanos: 0n, requestBody: null, responseBody: null,
  };
}

describe('request log retention', () => {
  let directory: string;
  let store: OperationsStore;

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'tollgate-retention-'));
    store = await openStore(`sqlite:${join(directory, 'tollgate.db')}`);
  });

  afterEach(async () => {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('deletes every row older than retention_days in small batches, and nothing younger', async () => {
    const old = Array.from({ length: 7 }, (_, index) => row(`req_old_${index}`, NOW - 31 * DAY - index));
    const young = [row('req_edge', NOW - 30 * DAY + 1), row('req_new', NOW - DAY)];
    await store.appendRequestLog([...old, ...young]);
    const deletes: number[] = [];
    const counting: Pick<OperationsStore, 'pruneRequestLog'> = {
      pruneRequestLog: async (before, limit) => {
        const deleted = await store.pruneRequestLog(before, limit);
        deletes.push(deleted);
        return deleted;
      },
    };
    const retention = new RequestLogRetention({ store: counting, retentionDays: 30, now: () => NOW, batchRows: 3, pauseMs: 1 });
    expect(await retention.pruneExpired()).toBe(7);
    expect(deletes).toEqual([3, 3, 1]);
    const left = await store.listRequestLog({}, { limit: 50 });
    expect(left.rows.map((entry) => entry.requestId)).toEqual(['req_new', 'req_edge']);
    expect(await retention.pruneExpired()).toBe(0);
  });

  it('stops between two batches when asked', async () => {
    await store.appendRequestLog(Array.from({ length: 6 }, (_, index) => row(`req_${index}`, NOW - 40 * DAY + index)));
    const retention = new RequestLogRetention({ store, retentionDays: 30, now: () => NOW, batchRows: 2, pauseMs: 3_600_000 });
    const pass = retention.pruneExpired();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await retention.stop();
    expect(await pass).toBe(2);
    expect((await store.listRequestLog({}, { limit: 50 })).rows).toHaveLength(4);
  });
});

describe('capUtf8', () => {
  it('keeps text within the cap whole and cuts longer text at a character boundary', () => {
    expect(capUtf8('hello', 5)).toBe('hello');
    expect(capUtf8('hello!', 5)).toBe('hello');
    // "é" is 2 bytes, "😀" 4: a cut inside either leaves the whole character out.
    expect(capUtf8('aé', 2)).toBe('a');
    expect(capUtf8('aé', 3)).toBe('aé');
    expect(capUtf8('ab😀', 5)).toBe('ab');
    expect(capUtf8('ab😀c', 6)).toBe('ab😀');
    expect(Buffer.byteLength(capUtf8('😀'.repeat(1_000), 1_001))).toBe(1_000);
  });
});
