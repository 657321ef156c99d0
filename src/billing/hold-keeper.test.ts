import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Usage } from '../protocol/canonical.js';
import { openStore } from '../store/open-store.js';
import type { MoneyStore, AccountStore, OperationsStore } from '../store/store.js';
import { BillingService, type Hold } from './billing-service.js';
import { HoldKeeper } from './hold-keeper.js';
import { COUNT_AT_CHECKPOINT, UsageMeter } from './usage-meter.js';
import { usdToNanos } from './money.js';

const TTL_SECONDS = 60;
let store: MoneyStore & AccountStore & OperationsStore;
let billing: BillingService;
let clock: number;
let keeper: HoldKeeper;
let meterErrors: Array<{ error: unknown; hold: Hold }>;

beforeEach(async () => {
  store = await openStore('sqlite::memory:');
  clock = Date.parse('2026-01-01T00:00:00Z');
  const prices = new Map([['m', { inputPerMillion: usdToNanos('1'), cachedInputPerMillion: usdToNanos('1'), outputPerMillion: usdToNanos('4') }]]);
  billing = new BillingService({ store, prices, holdTtlSeconds: TTL_SECONDS, now: () => new Date(clock) });
  meterErrors = [];
  keeper = new HoldKeeper({ store, billing, intervalMs: 60_000, extendAfterMs: 20_000, now: () => clock, onError: (error) => { throw error; }, onMeterError: (error, hold) => meterErrors.push({ error, hold }) });
  await store.createAccount({ id: 'acct', name: 'acct', openingBalanceNanos: usdToNanos('1') });
  await store.createKey({ id: 'key', accountId: 'acct', name: null, prefix: 'sk-tg-x', hash: 'h', models: null, requestsPerWindow: null, tokensPerMinute: null, expiresAt: null, disabled: false, createdAt: new Date(clock) });
});

afterEach(() => store.close());

const reserve = (requestId: string): Promise<Hold> => billing.reserve({ accountId: 'acct', keyId: 'key', requestId, model: 'm', surface: 'responses', inputTokenBound: 1_000, maxOutputTokens: 1_000 });

describe('HoldKeeper', () => {
  it('checkpoints only holds whose metered usage moved, all in one write, and a crash bills the last checkpoint', async () => {
    const usage: Usage = { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
    const moving = await reserve('req_moving');
    const idle = await reserve('req_idle');
    keeper.track(moving, () => usage);
    // Still waiting for its upstream to accept it: nothing billable yet.
    keeper.track(idle, () => ({ inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 }));
    expect(keeper.size).toBe(2);
    usage.outputTokens = 250;
    await keeper.checkpoint();
    // The process dies here: nothing settles, the holds expire, the sweep bills what was metered.
    clock += TTL_SECONDS * 1_000;
    expect(await billing.releaseExpired()).toBe(2);
    const charges = (await store.listLedger('acct')).filter((entry) => entry.kind === 'charge');
    expect(charges).toEqual([expect.objectContaining({ requestId: 'req_moving', amountNanos: 1_000_000n + 1_000_000n, outputTokens: 250 })]);
    expect(await store.findAccount('acct')).toMatchObject({ balanceNanos: usdToNanos('1') - 2_000_000n, reservedNanos: 0n });
  });

  it('checkpoints the input of an accepted answer that has no output yet, so a crash bills it', async () => {
    const hold = await reserve('req_thinking');
    const meter = new UsageMeter(function* () {
      yield;
      return 800;
    });
    keeper.track(hold, () => meter.checkpoint());
    await keeper.checkpoint();
    meter.accepted();
    // Not counted at once (most answers end with a report, which makes the count wasted work)...
    for (let tick = 2; tick < COUNT_AT_CHECKPOINT; tick++) await keeper.checkpoint();
    await new Promise((resolve) => setImmediate(resolve));
    expect(meter.metered().inputTokens).toBe(0);
    // ...but at the COUNT_AT_CHECKPOINT-th checkpoint; the next one writes it.
    await keeper.checkpoint();
    await expect.poll(() => meter.metered().inputTokens).toBe(800);
    await keeper.checkpoint();
    clock += TTL_SECONDS * 1_000;
    expect(await billing.releaseExpired()).toBe(1);
    const charges = (await store.listLedger('acct')).filter((entry) => entry.kind === 'charge');
    expect(charges).toEqual([expect.objectContaining({ requestId: 'req_thinking', amountNanos: 800_000n, inputTokens: 800, outputTokens: 0 })]);
  });

  it('extends a running hold before it expires, so a long stream is still settled by its request', async () => {
    const hold = await reserve('req_long');
    const stop = keeper.track(hold, () => ({ inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 }));
    for (let elapsed = 0; elapsed < TTL_SECONDS * 3; elapsed += 20) {
      clock += 20_000;
      await keeper.checkpoint();
      expect(await billing.releaseExpired()).toBe(0);
    }
    stop();
    expect(keeper.size).toBe(0);
    expect((await billing.settle(hold, { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 10, reasoningTokens: 0 })).billedNanos).toBe(1_040_000n);
  });

  it('skips a hold whose meter throws (reported with it), still checkpoints the others, and never rejects', async () => {
    const usage: Usage = { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
    const broken = await reserve('req_broken');
    const moving = await reserve('req_moving');
    const bug = new RangeError('Maximum call stack size exceeded');
    keeper.track(broken, () => {
      throw bug;
    });
    keeper.track(moving, () => usage);
    usage.outputTokens = 250;
    await expect(keeper.checkpoint()).resolves.toBeUndefined();
    expect(meterErrors).toEqual([{ error: bug, hold: broken }]);
    // The process dies here: the checkpointed hold bills what was metered, the other nothing.
    clock += TTL_SECONDS * 1_000;
    expect(await billing.releaseExpired()).toBe(2);
    const charges = (await store.listLedger('acct')).filter((entry) => entry.kind === 'charge');
    expect(charges).toEqual([expect.objectContaining({ requestId: 'req_moving', outputTokens: 250 })]);
  });
});
