/**
 * Quota slices through the billing service, on a real store (SQLite always, PostgreSQL when
 * TOLLGATE_TEST_POSTGRES_URL is set), with several "processes" (a billing service and its slices
 * each, under their own owner) on one database: after a hold took the exact path a slice is
 * granted and the next holds are admitted from it with no row; each settles once; a hold refused by
 * the balance recalls the other processes' slices and is admitted from what they give back; a
 * credit is spendable at once while slices are out; a hold reaches the database at its first
 * checkpoint; idle slices, and every slice at close, go back; a lease that cannot be renewed stops
 * admission before a sweep can end it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../test/support/databases.js';
import { newAccountWithKey, openTestStore, type TestStore } from '../../test/support/test-store.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Store } from '../store/store.js';
import { BillingService, type AdmissionPath } from './billing-service.js';
import { HoldKeeper } from './hold-keeper.js';
import type { ModelPrices } from './prices.js';
import { QuotaSlices, type QuotaSlicesOptions } from './quota-slices.js';

const PRICES: ModelPrices = { inputPerMillion: 2_500_000_000n, cachedInputPerMillion: 1_250_000_000n, outputPerMillion: 10_000_000_000n };
const prices = new Map([['gpt-test', PRICES]]);
/** What request(1_000, 500) holds. */
const HOLD = 7_500_000n;
const USAGE = { inputTokens: 100, cachedInputTokens: 0, outputTokens: 50, reasoningTokens: 0 };
const COST = 750_000n;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe.each(engines)('quota slices through billing on %s', (engine) => {
  let opened: TestStore;
  let store: Store;
  const running: QuotaSlices[] = [];

  beforeAll(async () => {
    opened = await openTestStore(engine);
    ({ store } = opened);
  });

  afterAll(async () => {
    await Promise.all(running.map((slices) => slices.close()));
    await opened?.close();
  });

  const newAccount = (balance: bigint) => newAccountWithKey(store, balance);

  /** One process: its slices (owner, timers) and its billing service, on the shared store. */
  function process(options: Partial<QuotaSlicesOptions> = {}) {
    const paths: AdmissionPath[] = [];
    const owner = `owner_${randomUUID().slice(0, 8)}`;
    const slices = new QuotaSlices({
      store,
      owner,
      maxNanos: 100_000_000n,
      headroom: 4,
      idleMs: 60_000,
      leaseMs: 60_000,
      tickMs: 10,
      recallWaitMs: 1_000,
      now: Date.now,
      onError: () => undefined,
      ...options,
    });
    running.push(slices);
    const billing = new BillingService({ store, prices, holdTtlSeconds: 60, slices, onAdmitted: (path) => paths.push(path) });
    return { owner, slices, billing, paths };
  }

  const request = (accountId: string, keyId: string) => ({
    accountId,
    keyId,
    requestId: `req_${randomUUID().slice(0, 8)}`,
    model: 'gpt-test',
    surface: 'chat-completions' as const,
    inputTokenBound: 1_000,
    maxOutputTokens: 500,
  });

  const activeSlices = async (accountId: string) => (await store.listSlices(accountId)).filter((slice) => slice.state === 'active');
  const charges = async (accountId: string) => (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');

  /** Two holds of the account at once take the exact path, the second asking for a slice; once it is granted both settle, billing nothing. */
  async function warm(one: ReturnType<typeof process>, accountId: string, keyId: string): Promise<void> {
    const holds = [await one.billing.reserve(request(accountId, keyId)), await one.billing.reserve(request(accountId, keyId))];
    await until(async () => (await activeSlices(accountId)).length === 1);
    for (const hold of holds) await one.billing.settle(hold, null);
  }

  it('grants a slice to an account with two holds running, admits the next holds from it with no row, and settles each once', async () => {
    const { accountId, keyId } = await newAccount(1_000_000_000n);
    const one = process();
    // One hold at a time asks for nothing.
    await one.billing.settle(await one.billing.reserve(request(accountId, keyId)), USAGE);
    await sleep(50);
    expect(await store.listSlices(accountId)).toEqual([]);
    const first = await one.billing.reserve(request(accountId, keyId));
    const second = await one.billing.reserve(request(accountId, keyId));
    expect([first.slice, second.slice]).toEqual([undefined, undefined]);
    await until(async () => (await activeSlices(accountId)).length === 1);
    const [slice] = await activeSlices(accountId);
    expect(slice).toMatchObject({ owner: one.owner, amountNanos: 100_000_000n });

    const third = await one.billing.reserve(request(accountId, keyId));
    const fourth = await one.billing.reserve(request(accountId, keyId));
    expect([third.slice?.id, fourth.slice?.id]).toEqual([slice!.id, slice!.id]);
    expect(one.paths).toEqual(['exact', 'exact', 'exact', 'slice', 'slice']);
    // Admitted in memory: only the exact ones have rows.
    expect(await store.countOpenHolds(accountId)).toBe(2);

    for (const hold of [first, second, third, fourth]) expect(await one.billing.settle(hold, USAGE)).toEqual({ billedNanos: COST, excessNanos: 0n });
    // A settlement tried again (the retrier's) bills nothing.
    expect(await one.billing.settle(third, USAGE)).toEqual({ billedNanos: 0n, excessNanos: 0n });
    expect((await charges(accountId)).filter((entry) => [first, second, third, fourth].some((hold) => hold.requestId === entry.requestId))).toHaveLength(4);
    expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 1_000_000_000n - 5n * COST, reservedNanos: 0n });
    expect((await activeSlices(accountId))[0]!.amountNanos).toBe(100_000_000n - 2n * HOLD);
  });

  it("admits a hold the balance refused once other processes' slices of the account are given back", async () => {
    const { accountId, keyId } = await newAccount(1_000_000_000n);
    const holder = process();
    const other = process();
    await warm(holder, accountId, keyId);
    // Leave less than a hold unreserved: only the holder's slice covers one now.
    const { balanceNanos } = (await store.findAccount(accountId))!;
    expect(await store.debit(accountId, balanceNanos - 100_000_000n - HOLD + 1n, 'leave less than a hold')).toBeDefined();

    const hold = await other.billing.reserve(request(accountId, keyId));
    expect(hold.slice).toBeUndefined();
    expect(other.paths).toEqual(['exact']);
    // The holder closed its recalled slice, giving back what it had not admitted, and admits no more from it.
    expect((await store.listSlices(accountId)).filter((slice) => slice.owner === holder.owner && slice.state !== 'closed')).toEqual([]);
    expect((await holder.billing.reserve(request(accountId, keyId))).slice?.id).toBeUndefined();
  });

  it("refuses a hold only a dead process's slice could cover, once its recall went unanswered", async () => {
    const { accountId, keyId } = await newAccount(1_000_000_000n);
    // A slice whose owner is gone: nobody answers its recall; its lease will end it.
    const dead = await store.grantSlice({ id: `slice_${randomUUID().slice(0, 8)}`, accountId, owner: 'owner_dead', maxNanos: 100_000_000n, minNanos: 1n, headroom: 4, leaseUntil: new Date(Date.now() + 60_000) });
    expect(dead).toBeDefined();
    expect(await store.debit(accountId, 1_000_000_000n - 100_000_000n - HOLD + 1n, 'leave less than a hold')).toBeDefined();
    const other = process({ recallWaitMs: 200 });
    const refused = await other.billing.reserve(request(accountId, keyId)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ errorCode: 'insufficient_balance' });
    expect((await store.listSlices(accountId)).map((slice) => [slice.owner, slice.state, slice.amountNanos])).toEqual([['owner_dead', 'recalled', 100_000_000n]]);
    // Once its lease has passed, the sweep gives it back and the hold is admitted.
    await store.releaseExpiredSlices(new Date(Date.now() + 120_000));
    expect((await other.billing.reserve(request(accountId, keyId))).slice).toBeUndefined();
  });

  it('spends a credit at once on every process while slices are out', async () => {
    const { accountId, keyId } = await newAccount(1_000_000_000n);
    const holder = process();
    const other = process();
    await warm(holder, accountId, keyId);
    const { balanceNanos } = (await store.findAccount(accountId))!;
    expect(await store.debit(accountId, balanceNanos - 100_000_000n, 'leave only the slice')).toBeDefined();
    await store.credit(accountId, 2n * HOLD, 'two more holds');
    // Neither of the others needs the slice back: the credit is there for the exact path of each.
    const third = process();
    const [theirs, thirds] = await Promise.all([other.billing.reserve(request(accountId, keyId)), third.billing.reserve(request(accountId, keyId))]);
    expect([theirs.slice, thirds.slice]).toEqual([undefined, undefined]);
    expect(await store.countOpenHolds(accountId)).toBe(2);
    const [slice] = await store.listSlices(accountId);
    expect(slice).toMatchObject({ owner: holder.owner, state: 'active', amountNanos: 100_000_000n });
    // And the holder still admits from its slice.
    expect((await holder.billing.reserve(request(accountId, keyId))).slice?.id).toBe(slice!.id);
  });

  it('moves a hold admitted from a slice into a row at its first checkpoint; it settles once from there', async () => {
    const { accountId, keyId } = await newAccount(1_000_000_000n);
    const one = process();
    await warm(one, accountId, keyId);
    const hold = await one.billing.reserve(request(accountId, keyId));
    expect(hold.slice).toBeDefined();
    const keeper = new HoldKeeper({
      store,
      billing: one.billing,
      intervalMs: 60_000,
      extendAfterMs: 20_000,
      now: Date.now,
      onError: (error) => {
        throw error;
      },
      onMeterError: () => undefined,
      converted: (converted) => one.billing.converted(converted),
    });
    const stop = keeper.track(hold, () => USAGE);
    // Nothing metered changed, but the hold has no row: its first checkpoint writes one.
    await keeper.checkpoint();
    expect(await store.countOpenHolds(accountId)).toBe(1);
    expect((await activeSlices(accountId))[0]!.amountNanos).toBe(100_000_000n - HOLD);
    // A second checkpoint with nothing new writes nothing.
    await keeper.checkpoint();
    stop();
    expect(await one.billing.settle(hold, USAGE)).toEqual({ billedNanos: COST, excessNanos: 0n });
    expect(await store.countOpenHolds(accountId)).toBe(0);
    expect((await charges(accountId)).filter((entry) => entry.requestId === hold.requestId)).toHaveLength(1);
    // The slice still has what it had after the move: the hold left it once.
    expect((await activeSlices(accountId))[0]!.amountNanos).toBe(100_000_000n - HOLD);
  });

  it('gives an idle slice back, and every unused part at close', async () => {
    const { accountId, keyId } = await newAccount(1_000_000_000n);
    const idle = process({ idleMs: 50 });
    const holds = [await idle.billing.reserve(request(accountId, keyId)), await idle.billing.reserve(request(accountId, keyId))];
    await until(async () => (await store.listSlices(accountId)).length === 1);
    for (const hold of holds) await idle.billing.settle(hold, null);
    // Closed, then dropped once empty.
    await until(async () => (await store.listSlices(accountId)).length === 0);
    expect(await store.findAccount(accountId)).toMatchObject({ balanceNanos: 1_000_000_000n, reservedNanos: 0n });

    const other = await newAccount(1_000_000_000n);
    const closing = process();
    await warm(closing, other.accountId, other.keyId);
    await closing.slices.close();
    expect(await store.listSlices(other.accountId)).toEqual([]);
    await expect(store.debit(other.accountId, 1_000_000_000n, 'everything')).resolves.toBeDefined();
  });

  it('stops admitting from a slice whose lease it cannot renew, before a sweep can end it', async () => {
    const { accountId, keyId } = await newAccount(1_000_000_000n);
    let renewing = true;
    const lagging = process({
      leaseMs: 600,
      store: { ...storePort(), renewSlices: (...args) => (renewing ? store.renewSlices(...args) : Promise.reject(new Error('database away'))) },
    });
    await warm(lagging, accountId, keyId);
    expect((await lagging.billing.reserve(request(accountId, keyId))).slice).toBeDefined();
    renewing = false;
    // Past two thirds of its lease: no more admission from it, though it is still there.
    await sleep(500);
    expect((await activeSlices(accountId)).length).toBe(1);
    expect((await lagging.billing.reserve(request(accountId, keyId))).slice).toBeUndefined();
    // Swept once its lease has passed; the renewal then finds it gone and forgets it.
    await sleep(200);
    await store.releaseExpiredSlices(new Date());
    renewing = true;
    await until(() => lagging.slices.size === 0);
  });

  /** The store as QuotaSlices takes it, to replace one of its calls. */
  function storePort(): QuotaSlicesOptions['store'] {
    return {
      grantSlice: (request) => store.grantSlice(request),
      closeSlice: (...args) => store.closeSlice(...args),
      renewSlices: (...args) => store.renewSlices(...args),
      recallSlices: (...args) => store.recallSlices(...args),
      recalledSlices: (owner) => store.recalledSlices(owner),
      dropClosedSlices: (owner) => store.dropClosedSlices(owner),
      listSlices: (accountId) => store.listSlices(accountId),
    };
  }

  it('leaves a slice whose settlement was given up to its lease, admitting no more from it', async () => {
    const { accountId, keyId } = await newAccount(1_000_000_000n);
    const one = process();
    await warm(one, accountId, keyId);
    const hold = await one.billing.reserve(request(accountId, keyId));
    one.billing.abandoned(hold);
    const next = await one.billing.reserve(request(accountId, keyId));
    expect(next.slice).toBeUndefined();
    await one.slices.close();
    // Nothing given back: what the slice holds is for the sweep to return once its lease has passed.
    expect(await activeSlices(accountId)).toMatchObject([{ amountNanos: 100_000_000n }]);
  });
});
