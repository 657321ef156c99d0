/**
 * The request log and usage-by-group queries on a real database: SQLite always, PostgreSQL when
 * TOLLGATE_TEST_POSTGRES_URL is set. Batches in, filters, newest-first keyset pages, pruning in
 * small batches, and usage per UTC day, hour, model and key with error counts from the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../../test/support/databases.js';
import { openTestStore, type TestStore } from '../../../test/support/test-store.js';
import type { RequestLogEntry, RequestLogRecord, Store } from '../store.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.UTC(2030, 0, 1);

function entry(overrides: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    at: new Date(START),
    requestId: 'req_1',
    accountId: 'acct_a',
    keyId: 'key_a',
    surface: 'chat-completions',
    model: 'model-a',
    target: 'sim/model-a',
    status: 200,
    errorCode: null,
    stream: false,
    latencyMs: 12,
    firstByteMs: 5,
    inputTokens: 10,
    cachedInputTokens: 2,
    cacheWriteInputTokens: 1,
    outputTokens: 7,
    reasoningTokens: 3,
    costNanos: 1_234n,
    requestBody: null,
    responseBody: null,
    ...overrides,
  };
}

describe.each(engines)('request log queries on %s', (engine) => {
  let opened: TestStore;
  let store: Store;
  let clock = new Date(START);

  beforeAll(async () => {
    opened = await openTestStore(engine, { now: () => clock });
    ({ store } = opened);
  });

  afterAll(() => opened?.close());

  async function everything(filter: Parameters<Store['listRequestLog']>[0] = {}): Promise<RequestLogRecord[]> {
    return (await store.listRequestLog(filter, { limit: 200 })).rows;
  }

  it('appends a batch and reads every field back, newest first', async () => {
    const first = entry({ requestId: 'req_fields_1', at: new Date(START + 1_000), requestBody: '{"model":"model-a"}', costNanos: 2n ** 60n });
    const second = entry({ requestId: 'req_fields_2', at: new Date(START + 2_000), stream: true, status: 502, errorCode: 'upstream_error', firstByteMs: null, target: null, ...zeroTokens() });
    await store.appendRequestLog([first, second]);
    await store.appendRequestLog([]);
    const rows = await everything({ requestId: 'req_fields_2' });
    expect(rows).toEqual([{ ...second, id: expect.any(Number), accountName: null, keyName: null }]);
    const both = (await everything({ from: new Date(START + 1_000), to: new Date(START + 2_001) })).map((row) => row.requestId);
    expect(both).toEqual(['req_fields_2', 'req_fields_1']);
    expect((await everything({ requestId: 'req_fields_1' }))[0]).toEqual({ ...first, id: expect.any(Number), accountName: null, keyName: null });
  });

  it('leaves the bodies unread with bodies: false, every other field as with them', async () => {
    const logged = entry({ requestId: 'req_no_bodies', at: new Date(START + 3_000), requestBody: '{"model":"model-a"}', responseBody: '{"id":"x"}' });
    await store.appendRequestLog([logged]);
    const [withBodies] = await everything({ requestId: 'req_no_bodies' });
    const [withoutBodies] = (await store.listRequestLog({ requestId: 'req_no_bodies' }, { limit: 1 }, { bodies: false })).rows;
    expect(withBodies).toMatchObject({ requestBody: '{"model":"model-a"}', responseBody: '{"id":"x"}' });
    expect(withoutBodies).toEqual({ ...withBodies, requestBody: null, responseBody: null });
  });

  it('writes a batch whole or not at all', async () => {
    // A row the database refuses (a NOT NULL column) after rows it took: none of the batch stays.
    const broken = entry({ requestId: 'req_whole_2', latencyMs: 1, status: null as unknown as number });
    await expect(store.appendRequestLog([entry({ requestId: 'req_whole_1' }), broken, entry({ requestId: 'req_whole_3' })])).rejects.toThrow();
    for (const requestId of ['req_whole_1', 'req_whole_3']) expect(await everything({ requestId })).toEqual([]);
    await store.appendRequestLog([entry({ requestId: 'req_whole_1' })]);
    expect(await everything({ requestId: 'req_whole_1' })).toHaveLength(1);
  });

  it('keeps a refusal with no account, key, surface or model, and reads them back as null', async () => {
    await store.appendRequestLog([entry({ requestId: 'req_unknown', accountId: null, keyId: null, surface: null, model: null, status: 401, errorCode: 'service_api_error' })]);
    expect((await everything({ requestId: 'req_unknown' }))[0]).toMatchObject({ accountId: null, keyId: null, surface: null, model: null, status: 401, errorCode: 'service_api_error' });
  });

  it('clamps measured durations into their column instead of refusing the batch', async () => {
    await store.appendRequestLog([entry({ requestId: 'req_clamp', latencyMs: -5, firstByteMs: 1e12 })]);
    expect((await everything({ requestId: 'req_clamp' }))[0]).toMatchObject({ latencyMs: 0, firstByteMs: 2_147_483_647 });
  });

  it('filters by time range, account, key, model, status, request id and errors only, and combines them', async () => {
    const base = START + 10 * DAY;
    await store.appendRequestLog([
      entry({ requestId: 'req_f1', at: new Date(base), accountId: 'acct_f1', keyId: 'key_f1', model: 'model-a' }),
      entry({ requestId: 'req_f2', at: new Date(base + 1), accountId: 'acct_f1', keyId: 'key_f2', model: 'model-b', status: 403, errorCode: 'insufficient_quota' }),
      entry({ requestId: 'req_f3', at: new Date(base + 2), accountId: 'acct_f2', keyId: 'key_f3', model: 'model-b' }),
      // A stream cut midway: 200, with the code the client was sent.
      entry({ requestId: 'req_f4', at: new Date(base + 3), accountId: 'acct_f2', keyId: 'key_f3', model: 'model-b', stream: true, errorCode: 'upstream_error' }),
      // A 4xx with no code of its own still counts.
      entry({ requestId: 'req_f5', at: new Date(base + 4), accountId: 'acct_f2', keyId: 'key_f3', model: 'model-a', status: 404 }),
    ]);
    const window = { from: new Date(base), to: new Date(base + 5) };
    const ids = async (filter: Parameters<Store['listRequestLog']>[0]) => (await everything(filter)).map((row) => row.requestId);
    expect(await ids({ accountId: 'acct_f1' })).toEqual(['req_f2', 'req_f1']);
    expect(await ids({ keyId: 'key_f3' })).toEqual(['req_f5', 'req_f4', 'req_f3']);
    expect(await ids({ model: 'model-b', ...window })).toEqual(['req_f4', 'req_f3', 'req_f2']);
    expect(await ids({ errorsOnly: true, ...window })).toEqual(['req_f5', 'req_f4', 'req_f2']);
    expect(await ids({ errorsOnly: true, accountId: 'acct_f2', model: 'model-b' })).toEqual(['req_f4']);
    expect(await ids({ status: 403 })).toEqual(['req_f2']);
    expect(await ids({ requestId: 'req_f1' })).toEqual(['req_f1']);
    expect(await ids({ from: new Date(base + 1), to: new Date(base + 2) })).toEqual(['req_f2']);
    expect(await ids({ accountId: 'acct_f1', model: 'model-a' })).toEqual(['req_f1']);
    expect(await ids({ accountId: 'acct_none' })).toEqual([]);
  });

  it('pages newest first by keyset, rows with the same time included once each', async () => {
    const base = START + 20 * DAY;
    const batch = Array.from({ length: 7 }, (_, index) => entry({ requestId: `req_page_${index}`, accountId: 'acct_page', at: new Date(base + Math.floor(index / 3)) }));
    await store.appendRequestLog(batch);
    const seen: string[] = [];
    let after: Parameters<Store['listRequestLog']>[1]['after'];
    let pages = 0;
    do {
      const page = await store.listRequestLog({ accountId: 'acct_page' }, { limit: 2, ...(after === undefined ? {} : { after }) });
      seen.push(...page.rows.map((row) => row.requestId));
      after = page.next;
      pages += 1;
    } while (after !== undefined && pages < 10);
    expect(pages).toBe(4);
    expect(seen).toEqual(['req_page_6', 'req_page_5', 'req_page_4', 'req_page_3', 'req_page_2', 'req_page_1', 'req_page_0']);
  });

  it('prunes only rows before the cut, oldest first, at most `limit` at a time', async () => {
    const base = START + 40 * DAY;
    await store.appendRequestLog(Array.from({ length: 5 }, (_, index) => entry({ requestId: `req_prune_${index}`, accountId: 'acct_prune', at: new Date(base + index) })));
    const cut = new Date(base + 3);
    // Everything older than `cut` from the earlier tests goes too; count only this account's rows.
    let deleted = 0;
    for (let round = 0; round < 100; round += 1) {
      const count = await store.pruneRequestLog(cut, 2);
      expect(count).toBeLessThanOrEqual(2);
      deleted += count;
      if (count < 2) break;
    }
    expect(deleted).toBeGreaterThanOrEqual(3);
    expect((await everything({ accountId: 'acct_prune' })).map((row) => row.requestId)).toEqual(['req_prune_4', 'req_prune_3']);
    expect(await store.pruneRequestLog(cut, 2)).toBe(0);
  });

  describe('usage by group', () => {
    const day0 = START + 100 * DAY;
    let accountId: string;
    let keyA: string;
    let keyB: string;

    beforeAll(async () => {
      accountId = `acct_usage_${engine}`;
      await store.createAccount({ id: accountId, name: `usage-${engine}`, openingBalanceNanos: 10n ** 12n });
      const other = `acct_usage_other_${engine}`;
      await store.createAccount({ id: other, name: `usage-other-${engine}`, openingBalanceNanos: 10n ** 12n });
      keyA = `key_usage_a_${engine}`;
      keyB = `key_usage_b_${engine}`;
      const otherKey = `key_usage_other_${engine}`;
      for (const [id, account] of [[keyA, accountId], [keyB, accountId], [otherKey, other]] as const) {
        await store.createKey({ id, accountId: account, name: null, prefix: id, hash: `hash_${id}`, models: null, requestsPerWindow: null, tokensPerMinute: null, expiresAt: null, disabled: false, createdAt: clock });
      }
      let holds = 0;
      const bill = async (at: number, account: string, keyId: string, model: string, costNanos: bigint, inputTokens: number) => {
        clock = new Date(at);
        holds += 1;
        const hold = { id: `hold_usage_${engine}_${holds}`, accountId: account, keyId, requestId: `req_usage_${holds}`, model, amountNanos: costNanos, expiresAt: new Date(at + HOUR) };
        expect(await store.openHold(hold)).toBe(true);
        expect(await store.settleHold(hold.id, { requestId: hold.requestId, keyId, model, costNanos, excessNanos: 0n, inputTokens, cachedInputTokens: 1, cacheWriteInputTokens: 0, outputTokens: 2, reasoningTokens: 0 })).toBe(true);
      };
      await bill(day0 + 1 * HOUR, accountId, keyA, 'model-a', 100n, 10);
      await bill(day0 + 1 * HOUR + 5, accountId, keyB, 'model-b', 200n, 20);
      await bill(day0 + 3 * HOUR, accountId, keyA, 'model-a', 300n, 30);
      await bill(day0 + DAY + 2 * HOUR, accountId, keyB, 'model-a', 400n, 40);
      await bill(day0 + 2 * HOUR, other, otherKey, 'model-a', 999n, 99);
      await store.appendRequestLog([
        entry({ requestId: 'req_err_1', at: new Date(day0 + 1 * HOUR + 9), accountId, keyId: keyA, model: 'model-a', status: 502, errorCode: 'upstream_error' }),
        entry({ requestId: 'req_err_2', at: new Date(day0 + DAY + 2 * HOUR), accountId, keyId: keyB, model: 'model-c', status: 200, errorCode: 'upstream_error' }),
        entry({ requestId: 'req_ok', at: new Date(day0 + 3 * HOUR), accountId, keyId: keyA, model: 'model-a' }),
      ]);
    });

    const range = () => ({ accountId, from: new Date(day0), to: new Date(day0 + 2 * DAY) });

    it('sums charges per UTC day and hour, only in the range', async () => {
      const byDay = await store.usageBy('day', range());
      expect(byDay.map((row) => [row.group, row.requests, row.inputTokens, row.costNanos])).toEqual([
        [new Date(day0).toISOString(), 3, 60, 600n],
        [new Date(day0 + DAY).toISOString(), 1, 40, 400n],
      ]);
      const byHour = await store.usageBy('hour', range());
      expect(byHour.map((row) => [row.group, row.requests, row.costNanos])).toEqual([
        [new Date(day0 + HOUR).toISOString(), 2, 300n],
        [new Date(day0 + 3 * HOUR).toISOString(), 1, 300n],
        [new Date(day0 + DAY + 2 * HOUR).toISOString(), 1, 400n],
      ]);
      expect(await store.usageBy('day', { ...range(), from: new Date(day0 + DAY) })).toHaveLength(1);
      expect(await store.usageBy('day', { ...range(), to: new Date(day0 + 1 * HOUR + 5) })).toEqual([
        { group: new Date(day0).toISOString(), requests: 1, inputTokens: 10, cachedInputTokens: 1, cacheWriteInputTokens: 0, outputTokens: 2, reasoningTokens: 0, costNanos: 100n, excessNanos: 0n },
      ]);
    });

    it('sums per model and per key, and over every account without the filter', async () => {
      expect((await store.usageBy('model', range())).map((row) => [row.group, row.requests, row.costNanos])).toEqual([
        ['model-a', 3, 800n],
        ['model-b', 1, 200n],
      ]);
      expect((await store.usageBy('key', range())).map((row) => [row.group, row.requests, row.costNanos])).toEqual([
        [keyA, 2, 400n],
        [keyB, 2, 600n],
      ]);
      const everyone = await store.usageBy('model', { from: new Date(day0), to: new Date(day0 + 2 * DAY) });
      expect(everyone.find((row) => row.group === 'model-a')?.costNanos).toBe(1_799n);
    });

    it('counts logged errors per the same groups', async () => {
      expect(await store.requestErrorsBy('day', range())).toEqual([
        { group: new Date(day0).toISOString(), errors: 1 },
        { group: new Date(day0 + DAY).toISOString(), errors: 1 },
      ]);
      expect(await store.requestErrorsBy('model', range())).toEqual([
        { group: 'model-a', errors: 1 },
        { group: 'model-c', errors: 1 },
      ]);
      expect(await store.requestErrorsBy('key', range())).toEqual([
        { group: keyA, errors: 1 },
        { group: keyB, errors: 1 },
      ]);
      expect(await store.requestErrorsBy('hour', { ...range(), to: new Date(day0 + DAY) })).toEqual([{ group: new Date(day0 + HOUR).toISOString(), errors: 1 }]);
    });
  });
});

function zeroTokens() {
  return { inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 0, reasoningTokens: 0, costNanos: 0n };
}
