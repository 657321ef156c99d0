/**
 * An operator's scale for browser tests (issue 21): `accounts` accounts named `customer-000`…, each
 * with a key named `main` that made one real request through the gateway (longer for the later
 * accounts, so they spend the most), then `logRows` request-log rows written by the store's batch
 * insert (the one the request-log writer uses): spread over the two days before the last hour,
 * each of an account and its key in turn, a third of them errors (429 `rate_limit_exceeded`).
 */
import { expect } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import type { RequestLogEntry } from '../../src/store/store.js';
import type { Harness } from './harness.js';

/** The request ids of one process share their first 20 characters (src/lib/ids.ts). */
export const SHARED_PREFIX = 'req_5eed5eed5eed5eed';

const BATCH = 2_000;

export interface OperatorScale {
  accountIds: string[];
  keyIds: string[];
  /** The request id of log row `index`. */
  requestIdOf(index: number): string;
  /** Whether log row `index` is an error. */
  failed(index: number): boolean;
}

export async function seedOperatorScale(harness: Harness, counts: { accounts: number; logRows: number }): Promise<OperatorScale> {
  const accountIds: string[] = [];
  const keyIds: string[] = [];
  const secrets: string[] = [];
  for (let index = 0; index < counts.accounts; index += 1) {
    const account = await createAccount(harness.store, { name: `customer-${String(index).padStart(3, '0')}`, balanceUsd: '100' }, CLI_ACTOR);
    const key = await createKey(harness.store, { accountRef: account.id, name: 'main' }, CLI_ACTOR);
    accountIds.push(account.id);
    keyIds.push(key.key.id);
    secrets.push(key.secret);
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < counts.accounts) {
        const index = next;
        next += 1;
        const content = 'word '.repeat(800 + index * 4);
        const answer = await harness.post('/v1/chat/completions', { model: 'model-5.6-mini', max_tokens: 16, messages: [{ role: 'user', content }] }, secrets[index] ?? '');
        expect(answer.status).toBe(200);
        await answer.text();
      }
    }),
  );
  const requestIdOf = (index: number) => `${SHARED_PREFIX}${index.toString(16).padStart(8, '0')}`;
  const failed = (index: number) => index % 3 === 0;
  const now = Date.now();
  for (let first = 0; first < counts.logRows; first += BATCH) {
    const rows: RequestLogEntry[] = [];
    for (let index = first; index < Math.min(first + BATCH, counts.logRows); index += 1) {
      rows.push({
        at: new Date(now - 3_600_000 - (counts.logRows - index) * 3_000),
        requestId: requestIdOf(index),
        accountId: accountIds[index % counts.accounts] ?? null,
        keyId: keyIds[index % counts.accounts] ?? null,
        surface: 'chat-completions',
        model: 'model-5.6-mini',
        target: 'sim/model-5.6-mini',
        status: failed(index) ? 429 : 200,
        errorCode: failed(index) ? 'rate_limit_exceeded' : null,
        stream: false,
        latencyMs: 120,
        firstByteMs: null,
        inputTokens: 10,
        cachedInputTokens: 0,
        cacheWriteInputTokens: 0,
        outputTokens: 5,
        reasoningTokens: 0,
        costNanos: 0n,
        requestBody: null,
        responseBody: null,
      });
    }
    await harness.store.appendRequestLog(rows);
  }
  return { accountIds, keyIds, requestIdOf, failed };
}
