import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.js';
import { openStore } from '../store/open-store.js';
import type { MoneyStore, AccountStore, OperationsStore } from '../store/store.js';
import { BillingService } from './billing-service.js';
import { costOfTokens } from './money.js';
import type { ModelPrices } from './prices.js';

const PRICES: ModelPrices = { inputPerMillion: 2_500_000_000n, cachedInputPerMillion: 1_250_000_000n, outputPerMillion: 10_000_000_000n };
const prices = new Map([['gpt-test', PRICES]]);
const TTL_SECONDS = 60;

let folder: string;
let store: MoneyStore & AccountStore & OperationsStore;
let clock: Date;
let billing: BillingService;

beforeEach(async () => {
  folder = mkdtempSync(join(tmpdir(), 'tollgate-billing-'));
  store = await openStore(`sqlite:${join(folder, 'billing.db')}`);
  clock = new Date('2030-01-01T00:00:00Z');
  billing = new BillingService({ store, prices, now: () => clock, holdTtlSeconds: TTL_SECONDS });
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
  });
});

afterEach(async () => {
  await store.close();
  rmSync(folder, { recursive: true, force: true });
});

const request = (inputTokenBound: number, maxOutputTokens: number) => ({
  accountId: 'acct',
  keyId: 'key',
  requestId: 'req_1',
  model: 'gpt-test',
  surface: 'chat-completions' as const,
  inputTokenBound,
  maxOutputTokens,
});

describe('BillingService', () => {
  it('holds estimated input at the input price plus the allowed output at the output price', () => {
    expect(billing.holdAmount('gpt-test', 1_000, 500)).toBe(2_500_000n + 5_000_000n);
    expect(billing.holdAmount('gpt-test', 1, 1)).toBe(costOfTokens(1, PRICES.inputPerMillion) + costOfTokens(1, PRICES.outputPerMillion));
    expect(() => billing.holdAmount('gpt-unknown', 1, 1)).toThrow(GatewayError);
  });

  it('reserves the hold amount against the account', async () => {
    const hold = await billing.reserve(request(1_000, 500));
    expect(hold).toMatchObject({ accountId: 'acct', keyId: 'key', requestId: 'req_1', model: 'gpt-test', amountNanos: 7_500_000n });
    expect(hold.id).toMatch(/^hold_/);
    expect(await store.findAccount('acct')).toMatchObject({ balanceNanos: 1_000_000_000n, reservedNanos: 7_500_000n });
    expect(await store.countOpenHolds('acct')).toBe(1);
  });

  it('refuses with the 403 insufficient_balance error when the balance cannot cover the hold', async () => {
    // 100k output tokens at $10/M is $1, and the input pushes it past the $1 balance.
    const refusal = await billing.reserve(request(1, 100_000)).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(GatewayError);
    expect(refusal).toMatchObject({ errorCode: 'insufficient_balance', status: 403, wireCode: 'insufficient_user_quota' });
    expect(await store.findAccount('acct')).toMatchObject({ reservedNanos: 0n });
    expect(await store.countOpenHolds('acct')).toBe(0);
    // Exactly the balance is still allowed.
    await expect(billing.reserve(request(0, 100_000))).resolves.toMatchObject({ amountNanos: 1_000_000_000n });
  });

  it('settles exactly once at the actual cost, to the nano', async () => {
    const hold = await billing.reserve(request(1_000, 4_000));
    const usage = { inputTokens: 1_234, cachedInputTokens: 1_000, outputTokens: 777, reasoningTokens: 300 };
    // 234 × 2500 + 1000 × 1250 + 777 × 10000 nanos.
    const expected = 585_000n + 1_250_000n + 7_770_000n;
    expect(await billing.settle(hold, usage)).toEqual({ billedNanos: expected, excessNanos: 0n });
    expect(await billing.settle(hold, usage)).toEqual({ billedNanos: 0n, excessNanos: 0n });
    expect(await store.findAccount('acct')).toMatchObject({ balanceNanos: 1_000_000_000n - expected, reservedNanos: 0n });
    const charges = (await store.listLedger('acct')).filter((entry) => entry.kind === 'charge');
    expect(charges).toEqual([
      expect.objectContaining({ amountNanos: expected, requestId: 'req_1', keyId: 'key', model: 'gpt-test', ...usage }),
    ]);
  });

  it('bills nothing for null or all-zero usage but releases the reservation', async () => {
    const first = await billing.reserve(request(10, 10));
    const second = await billing.reserve(request(10, 10));
    expect((await billing.settle(first, null)).billedNanos).toBe(0n);
    expect((await billing.settle(second, { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 })).billedNanos).toBe(0n);
    expect(await store.findAccount('acct')).toMatchObject({ balanceNanos: 1_000_000_000n, reservedNanos: 0n });
    expect((await store.listLedger('acct')).filter((entry) => entry.kind === 'charge')).toEqual([]);
  });

  it('releases holds once their time to live has passed; a late settle then bills nothing', async () => {
    const hold = await billing.reserve(request(100, 100));
    expect(await billing.releaseExpired()).toBe(0);
    clock = new Date(clock.getTime() + TTL_SECONDS * 1_000);
    expect(await billing.releaseExpired()).toBe(1);
    expect(await store.findAccount('acct')).toMatchObject({ reservedNanos: 0n });
    expect((await billing.settle(hold, { inputTokens: 100, cachedInputTokens: 0, outputTokens: 100, reasoningTokens: 0 })).billedNanos).toBe(0n);
    expect((await store.findAccount('acct'))?.balanceNanos).toBe(1_000_000_000n);
  });

  it('never charges more than the hold: the excess is recorded as its own entry and not debited', async () => {
    // Held: 1,000 input + 100 output = 2,500,000 + 1,000,000 nanos. Reported: 100× the input.
    const hold = await billing.reserve(request(1_000, 100));
    const usage = { inputTokens: 100_000, cachedInputTokens: 0, outputTokens: 100, reasoningTokens: 0 };
    const cost = 250_000_000n + 1_000_000n;
    expect(await billing.settle(hold, usage)).toEqual({ billedNanos: hold.amountNanos, excessNanos: cost - hold.amountNanos });
    expect(await store.findAccount('acct')).toMatchObject({ balanceNanos: 1_000_000_000n - hold.amountNanos, reservedNanos: 0n });
    const entries = await store.listLedger('acct');
    expect(entries.filter((entry) => entry.kind === 'charge')).toEqual([expect.objectContaining({ amountNanos: hold.amountNanos, ...usage })]);
    expect(entries.filter((entry) => entry.kind === 'excess')).toEqual([
      expect.objectContaining({ amountNanos: cost - hold.amountNanos, requestId: 'req_1', model: 'gpt-test', inputTokens: 0 }),
    ]);
  });

  it('an expired hold settles its last checkpoint, capped at the hold, instead of releasing it', async () => {
    const hold = await billing.reserve(request(1_000, 1_000));
    const usage = { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 300, reasoningTokens: 0 };
    const cost = billing.cappedCost(hold, usage);
    expect(cost).toBe(2_500_000n + 3_000_000n);
    await store.checkpointHolds([{ holdId: hold.id, expiresAt: billing.expiryFromNow(), costNanos: cost, tokens: usage }]);
    clock = new Date(clock.getTime() + TTL_SECONDS * 1_000);
    expect(await billing.releaseExpired()).toBe(1);
    expect(await store.findAccount('acct')).toMatchObject({ balanceNanos: 1_000_000_000n - cost, reservedNanos: 0n });
    expect((await store.listLedger('acct')).filter((entry) => entry.kind === 'charge')).toEqual([
      expect.objectContaining({ amountNanos: cost, requestId: 'req_1', keyId: 'key', model: 'gpt-test', ...usage }),
    ]);
    expect((await billing.settle(hold, usage)).billedNanos).toBe(0n);
  });

  it('adds the model\'s input margin to the hold, rounded up', () => {
    const bounded = new BillingService({ store, prices, inputBounds: new Map([['gpt-test', { marginPercent: 40, imageTokens: 1_600 }]]), holdTtlSeconds: TTL_SECONDS });
    // 1,001 × 1.4 = 1,401.4 → 1,402 input tokens at $2.50/M.
    expect(bounded.holdAmount('gpt-test', 1_001, 0)).toBe(costOfTokens(1_402, PRICES.inputPerMillion));
    expect(bounded.inputBound('gpt-test').imageTokens).toBe(1_600);
  });

  it('refuses a model without prices as unavailable, and a bad hold time to live', async () => {
    await expect(billing.reserve({ ...request(1, 1), model: 'gpt-unknown' })).rejects.toMatchObject({ errorCode: 'model_unavailable', status: 503 });
    expect(() => new BillingService({ store, prices, holdTtlSeconds: 0 })).toThrow(RangeError);
  });
});
