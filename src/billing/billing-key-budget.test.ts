/**
 * BillingService with a key budget, on a real SQLite store: the hold is refused with the key-budget
 * 403 (not the balance's), the period is the service's clock's, and settling spends in it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.js';
import { openStore } from '../store/open-store.js';
import type { MoneyStore, AccountStore, OperationsStore } from '../store/store.js';
import { BillingService } from './billing-service.js';
import type { ModelPrices } from './prices.js';

const PRICES: ModelPrices = { inputPerMillion: 1_000_000_000n, cachedInputPerMillion: 500_000_000n, outputPerMillion: 1_000_000_000n };

let folder: string;
let store: MoneyStore & AccountStore & OperationsStore;
let clock: Date;
let billing: BillingService;

beforeEach(async () => {
  folder = mkdtempSync(join(tmpdir(), 'tollgate-billing-budget-'));
  store = await openStore(`sqlite:${join(folder, 'billing.db')}`);
  clock = new Date('2030-05-31T23:59:59.000Z');
  // No key lookup given: the service reads the key's budget from the store.
  billing = new BillingService({ store, prices: new Map([['gpt-test', PRICES]]), now: () => clock, holdTtlSeconds: 60 });
  await store.createAccount({ id: 'acct', name: 'acme', openingBalanceNanos: 1_000_000_000n });
  await store.createKey({
    id: 'key',
    accountId: 'acct',
    name: null,
    prefix: 'sk-tg-abcdef',
    hash: 'ab'.repeat(32),
    models: null,
    requestsPerWindow: null,
    tokensPerMinute: null,
    expiresAt: null,
    disabled: false,
    createdAt: clock,
    // 1,500 tokens a month at $1/M.
    budget: { limitNanos: 1_500_000n, period: 'month' },
  });
});

afterEach(async () => {
  await store.close();
  rmSync(folder, { recursive: true, force: true });
});

const request = (tokens: number) => ({ accountId: 'acct', keyId: 'key', requestId: `req_${tokens}`, model: 'gpt-test', surface: 'chat-completions' as const, inputTokenBound: tokens, maxOutputTokens: 0 });
const usage = (inputTokens: number) => ({ inputTokens, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 });

describe('BillingService with a key budget', () => {
  it("refuses with key_budget_exceeded (the balance's 403 with its own message), reserving nothing", async () => {
    const hold = await billing.reserve(request(1_000));
    const refusal = await billing.reserve(request(501)).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(GatewayError);
    expect(refusal).toMatchObject({ errorCode: 'key_budget_exceeded', status: 403, wireCode: 'insufficient_user_quota', message: expect.stringMatching(/key budget/) });
    expect(await store.findAccount('acct')).toMatchObject({ reservedNanos: 1_000_000n });
    expect(await billing.settle(hold, usage(400))).toEqual({ billedNanos: 400_000n, excessNanos: 0n });
    // 1,100 tokens are left this month.
    await expect(billing.reserve(request(1_101))).rejects.toMatchObject({ errorCode: 'key_budget_exceeded' });
    await expect(billing.reserve(request(1_100))).resolves.toMatchObject({ amountNanos: 1_100_000n });
  });

  it("counts in the month of the service's clock: a second later, June starts with the whole budget", async () => {
    const may = await billing.reserve(request(1_500));
    await billing.settle(may, usage(1_500));
    await expect(billing.reserve(request(1))).rejects.toMatchObject({ errorCode: 'key_budget_exceeded' });
    clock = new Date('2030-06-01T00:00:00.000Z');
    await expect(billing.reserve(request(1_500))).resolves.toMatchObject({ amountNanos: 1_500_000n });
    expect(await store.keySpend('key', { period: 'month', start: new Date('2030-05-01T00:00:00Z') })).toEqual({ spentNanos: 1_500_000n, reservedNanos: 0n });
    expect(await store.keySpend('key', { period: 'month', start: new Date('2030-06-01T00:00:00Z') })).toEqual({ spentNanos: 0n, reservedNanos: 1_500_000n });
  });
});
