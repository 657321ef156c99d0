import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/open-store.js';
import type { Store, TokenCounts } from '../store/store.js';
import { createAccount } from './accounts.js';
import { AdminError } from './admin-error.js';
import { CLI_ACTOR } from './audit.js';
import { createKey } from './keys.js';
import { usageReport } from './usage.js';

let directory: string;
let store: Store;
let chargeCount = 0;

beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'tollgate-admin-usage-'));
  store = await openStore(`sqlite:${join(directory, 'tollgate.db')}`, { migrate: true });
});

afterEach(async () => {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
});

/** Records one charge the way the gateway does: open a hold, settle it with the usage. */
async function charge(accountName: string, model: string, costNanos: bigint, tokens: TokenCounts): Promise<void> {
  const { key } = await createKey(store, { accountRef: accountName }, CLI_ACTOR);
  chargeCount += 1;
  const holdId = `hold_${chargeCount}`;
  const requestId = `req_${chargeCount}`;
  const opened = await store.openHold({ id: holdId, accountId: key.accountId, keyId: key.id, requestId, model, amountNanos: costNanos, expiresAt: new Date(Date.now() + 60_000) });
  expect(opened).toBe(true);
  expect(await store.settleHold(holdId, { requestId, keyId: key.id, model, costNanos, excessNanos: 0n, ...tokens })).toBe(true);
}

const tokens = (input: number, cached: number, output: number, reasoning: number, cacheWrite = 0): TokenCounts => ({
  inputTokens: input,
  cachedInputTokens: cached,
  cacheWriteInputTokens: cacheWrite,
  outputTokens: output,
  reasoningTokens: reasoning,
});

describe('usageReport', () => {
  beforeEach(async () => {
    await createAccount(store, { name: 'acme', balanceUsd: '10' }, CLI_ACTOR);
    await createAccount(store, { name: 'other', balanceUsd: '10' }, CLI_ACTOR);
    await charge('acme', 'model-5.6-mini', 1_000n, tokens(100, 10, 20, 0));
    await charge('acme', 'model-5.6', 250_000n, tokens(1000, 0, 500, 300));
    await charge('acme', 'model-5.6', 750_000n, tokens(2000, 100, 50, 30, 400));
    await charge('other', 'model-5.6', 5n, tokens(1, 0, 1, 0));
  });

  it('groups charges by model, sorted, with a total', async () => {
    const report = await usageReport(store, { accountRef: 'acme' });
    expect(report.accountId).toMatch(/^acct_/);
    expect(report.from).toBeNull();
    expect(report.by).toBe('model');
    expect(report.rows).toEqual([
      { group: 'model-5.6', requests: 2, ...tokens(3000, 100, 550, 330, 400), errors: 0, costNanos: 1_000_000n, excessNanos: 0n },
      { group: 'model-5.6-mini', requests: 1, ...tokens(100, 10, 20, 0), errors: 0, costNanos: 1_000n, excessNanos: 0n },
    ]);
    expect(report.total).toEqual({ requests: 3, ...tokens(3100, 110, 570, 330, 400), errors: 0, costNanos: 1_001_000n, excessNanos: 0n });
  });

  it('adds errors from the request log, also for a group with no charge, per key and per day', async () => {
    const acme = await store.findAccount('acme');
    const [key] = await store.listKeys(acme?.id);
    const failed = { at: new Date(), requestId: 'req_failed', accountId: acme?.id ?? '', keyId: key?.id ?? '', surface: 'responses', target: null, status: 502, errorCode: 'upstream_error', stream: true, latencyMs: 3, firstByteMs: 1, ...tokens(0, 0, 0, 0), costNanos: 0n, requestBody: null, responseBody: null };
    await store.appendRequestLog([
      { ...failed, model: 'model-5.6' },
      { ...failed, requestId: 'req_failed_2', model: 'model-never-billed' },
      { ...failed, requestId: 'req_fine', model: 'model-5.6', status: 200, errorCode: null },
    ]);
    const byModel = await usageReport(store, { accountRef: 'acme' });
    expect(byModel.rows.map((row) => [row.group, row.requests, row.errors])).toEqual([
      ['model-5.6', 2, 1],
      ['model-5.6-mini', 1, 0],
      ['model-never-billed', 0, 1],
    ]);
    expect(byModel.total.errors).toBe(2);
    const byKey = await usageReport(store, { accountRef: 'acme', by: 'key' });
    expect(byKey.rows.find((row) => row.group === key?.id)).toMatchObject({ requests: 1, errors: 2 });
    expect(byKey.rows.reduce((sum, row) => sum + row.requests, 0)).toBe(3);
    const byDay = await usageReport(store, { by: 'day' });
    const today = new Date();
    today.setUTCHours(0, 0, 0, 0);
    expect(byDay.rows.map((row) => row.group)).toContain(today.toISOString());
    expect(byDay.total).toMatchObject({ requests: 4, errors: 2 });
  });

  it('covers every account when none is named', async () => {
    const report = await usageReport(store);
    expect(report.accountId).toBeNull();
    expect(report.total.requests).toBe(4);
    expect(report.total.costNanos).toBe(1_001_005n);
  });

  it('leaves out charges before `from` and from `to` on', async () => {
    const future = new Date(Date.now() + 3_600_000);
    const past = new Date(Date.now() - 3_600_000);
    const report = await usageReport(store, { from: future });
    expect(report.rows).toEqual([]);
    expect(report.total).toEqual({ requests: 0, ...tokens(0, 0, 0, 0), errors: 0, costNanos: 0n, excessNanos: 0n });
    expect(report.from).toEqual(future);
    expect((await usageReport(store, { from: past })).total.requests).toBe(4);
    expect((await usageReport(store, { from: past, to: future })).total.requests).toBe(4);
    expect((await usageReport(store, { to: past })).total.requests).toBe(0);
  });

  it('refuses an unknown account, an invalid date and a range that ends before it starts', async () => {
    await expect(usageReport(store, { accountRef: 'nobody' })).rejects.toThrow(AdminError);
    await expect(usageReport(store, { from: new Date(Number.NaN) })).rejects.toThrow(/from is not a valid date/);
    await expect(usageReport(store, { to: new Date(Number.NaN), names: ['--since', '--until'] })).rejects.toThrow(/--until is not a valid date/);
    await expect(usageReport(store, { from: new Date(2_000), to: new Date(1_000) })).rejects.toThrow(/from must not be after to/);
  });
});
