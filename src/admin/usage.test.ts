import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/open-store.js';
import type { Store, TokenCounts } from '../store/store.js';
import { createAccount } from './accounts.js';
import { AdminError } from './admin-error.js';
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
  const { key } = await createKey(store, { accountRef: accountName });
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
    await createAccount(store, { name: 'acme', balanceUsd: '10' });
    await createAccount(store, { name: 'other', balanceUsd: '10' });
    await charge('acme', 'model-5.6-mini', 1_000n, tokens(100, 10, 20, 0));
    await charge('acme', 'model-5.6', 250_000n, tokens(1000, 0, 500, 300));
    await charge('acme', 'model-5.6', 750_000n, tokens(2000, 100, 50, 30, 400));
    await charge('other', 'model-5.6', 5n, tokens(1, 0, 1, 0));
  });

  it('groups charges by model, sorted, with a total', async () => {
    const report = await usageReport(store, { accountRef: 'acme' });
    expect(report.accountId).toMatch(/^acct_/);
    expect(report.since).toBeNull();
    expect(report.rows).toEqual([
      { model: 'model-5.6', requests: 2, ...tokens(3000, 100, 550, 330, 400), costNanos: 1_000_000n, excessNanos: 0n },
      { model: 'model-5.6-mini', requests: 1, ...tokens(100, 10, 20, 0), costNanos: 1_000n, excessNanos: 0n },
    ]);
    expect(report.total).toEqual({ requests: 3, ...tokens(3100, 110, 570, 330, 400), costNanos: 1_001_000n, excessNanos: 0n });
  });

  it('covers every account when none is named', async () => {
    const report = await usageReport(store);
    expect(report.accountId).toBeNull();
    expect(report.total.requests).toBe(4);
    expect(report.total.costNanos).toBe(1_001_005n);
  });

  it('leaves out charges before `since`', async () => {
    const future = new Date(Date.now() + 3_600_000);
    const report = await usageReport(store, { since: future });
    expect(report.rows).toEqual([]);
    expect(report.total).toEqual({ requests: 0, ...tokens(0, 0, 0, 0), costNanos: 0n , excessNanos: 0n });
    expect(report.since).toEqual(future);
    expect((await usageReport(store, { since: new Date(Date.now() - 3_600_000) })).total.requests).toBe(4);
  });

  it('refuses an unknown account and an invalid date', async () => {
    await expect(usageReport(store, { accountRef: 'nobody' })).rejects.toThrow(AdminError);
    await expect(usageReport(store, { since: new Date(Number.NaN) })).rejects.toThrow(/since is not a valid date/);
  });
});
