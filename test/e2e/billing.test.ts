/**
 * Money, end to end: the balance equals credits minus charges to the nano-USD after a mixed run;
 * concurrent requests can never spend more than the balance; each admitted request is charged
 * exactly once; a stream cut short bills what streamed and aborts the upstream request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { boundInputTokens } from '../../src/protocol/input-bound.js';
import { TOKENS_PER_IMAGE } from '../../src/protocol/tokens.js';
import type { LedgerEntry } from '../../src/store/store.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble } from '../support/openai-upstream.js';

/** Prices of the test catalog, nano-USD per 1M tokens. */
const PRICES = { input: usdToNanos('1'), cached: usdToNanos('0.5'), output: usdToNanos('4') };

function expectedCost(entry: Pick<LedgerEntry, 'inputTokens' | 'cachedInputTokens' | 'outputTokens'>): bigint {
  return (
    costOfTokens(entry.inputTokens - entry.cachedInputTokens, PRICES.input) +
    costOfTokens(entry.cachedInputTokens, PRICES.cached) +
    costOfTokens(entry.outputTokens, PRICES.output)
  );
}

async function ledgerTotals(harness: Harness, accountId: string) {
  const ledger = await harness.store.listLedger(accountId);
  const credits = ledger.filter((entry) => entry.kind === 'credit').reduce((sum, entry) => sum + entry.amountNanos, 0n);
  const charges = ledger.filter((entry) => entry.kind === 'charge');
  const charged = charges.reduce((sum, entry) => sum + entry.amountNanos, 0n);
  const account = await harness.store.findAccount(accountId);
  return { ledger, credits, charges, charged, account: account! };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe.each(engines)('billing on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ chunks: 40, chunkDelayMs: 25 });
    harness = await startHarness({ engine, catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl }), env: { TEST_UPSTREAM_KEY: 'sk-upstream-secret' } });
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it('after a mixed run the balance is credits minus charges, to the nano-USD', async () => {
    const { accountId, secret } = await harness.newAccount('3');
    const client = harness.client(secret);
    await client.chat.completions.create({ model: 'model-5.6', messages: [{ role: 'user', content: 'one' }] });
    const streamed = await client.chat.completions.create({ model: 'model-5.6-mini', messages: [{ role: 'user', content: 'two' }], stream: true });
    for await (const chunk of streamed) void chunk;
    await client.responses.create({ model: 'model-5.6-luna', input: 'three', reasoning: { effort: 'high' } });
    const helper = client.responses.stream({ model: 'model-5.6', input: 'four' });
    await helper.finalResponse();
    await client.chat.completions.create({ model: 'failover-model', messages: [{ role: 'user', content: 'five' }] });
    await client.chat.completions.create({ model: 'relay-model', messages: [{ role: 'user', content: 'six' }] });
    await expect(client.chat.completions.create({ model: 'broken-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 503 });
    const failing = await client.chat.completions.create({ model: 'mid-fail-model', messages: [{ role: 'user', content: 'seven' }], stream: true });
    await expect(
      (async () => {
        for await (const chunk of failing) void chunk;
      })(),
    ).rejects.toThrow();
    await harness.store.credit(accountId, usdToNanos('1.5'), 'top-up');

    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    const totals = await ledgerTotals(harness, accountId);
    expect(totals.credits).toBe(usdToNanos('4.5'));
    // Six answers and the part-streamed failure are billed; the 503 is not.
    expect(totals.charges).toHaveLength(7);
    expect(totals.account.balanceNanos).toBe(totals.credits - totals.charged);
    expect(totals.account.reservedNanos).toBe(0n);
    for (const charge of totals.charges) {
      expect(charge.amountNanos).toBe(expectedCost(charge));
      expect(charge.outputTokens).toBeGreaterThan(0);
    }
    const relayed = totals.charges.find((charge) => charge.model === 'relay-model');
    expect(relayed).toMatchObject({ inputTokens: 11, cachedInputTokens: 3, outputTokens: 40 });
  });

  it('the charge of a request is the cost of the usage the client was shown', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/chat/completions', { model: 'model-5.6', messages: [{ role: 'user', content: 'price me' }] }, secret);
    const requestId = response.headers.get('x-request-id');
    const body = (await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const { charges } = await ledgerTotals(harness, accountId);
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({ requestId, inputTokens: body.usage.prompt_tokens, outputTokens: body.usage.completion_tokens });
  });

  it('50 concurrent requests on a balance that covers 10: never below zero, one charge per admitted request', async () => {
    const body = { model: 'slow-model', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 100 };
    const hold = costOfTokens(boundInputTokens(body, { imageTokens: TOKENS_PER_IMAGE }), PRICES.input) + costOfTokens(100, PRICES.output);
    const { accountId, secret } = await harness.newAccount('0');
    await harness.store.credit(accountId, hold * 10n, 'exactly ten holds');

    const responses = await Promise.all(Array.from({ length: 50 }, () => harness.post('/v1/chat/completions', body, secret)));
    const statuses = responses.map((response) => response.status);
    const admitted = responses.filter((response) => response.status === 200).map((response) => response.headers.get('x-request-id'));
    expect(statuses.every((status) => status === 200 || status === 403)).toBe(true);
    expect(admitted.length).toBeGreaterThanOrEqual(10);
    await Promise.all(responses.map((response) => response.text()));

    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    const totals = await ledgerTotals(harness, accountId);
    expect(totals.account.balanceNanos).toBeGreaterThanOrEqual(0n);
    expect(totals.account.balanceNanos).toBe(totals.credits - totals.charged);
    expect(totals.charges.map((charge) => charge.requestId).sort()).toEqual([...admitted].sort());
  });

  it('a client that disconnects mid-stream is billed for what streamed, and its upstream request is aborted', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const abortedBefore = upstream.abortedCount();
    const response = await harness.post(
      '/v1/chat/completions',
      { model: 'relay-model', messages: [{ role: 'user', content: 'long story' }], stream: true },
      secret,
    );
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while ((received.match(/"content":"word "/g) ?? []).length < 5) {
      const { value, done } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
    }
    await reader.cancel();

    await waitFor(() => upstream.abortedCount() === abortedBefore + 1);
    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    const { charges, account, credits, charged } = await ledgerTotals(harness, accountId);
    expect(charges).toHaveLength(1);
    // At least what the client saw, and well short of the 40 words of the full answer.
    expect(charges[0]!.outputTokens).toBeGreaterThanOrEqual(5);
    expect(charges[0]!.outputTokens).toBeLessThan(40);
    expect(charges[0]!.amountNanos).toBe(expectedCost(charges[0]!));
    expect(account.balanceNanos).toBe(credits - charged);
  });

  it('the same for a simulated stream cut short by the client', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const full = await harness.client(secret).chat.completions.create({ model: 'slow-model', messages: [{ role: 'user', content: 'a long tale' }] });
    const fullOutput = full.usage!.completion_tokens;
    const response = await harness.post('/v1/chat/completions', { model: 'slow-model', messages: [{ role: 'user', content: 'a long tale' }], stream: true }, secret);
    const reader = response.body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    const { charges } = await ledgerTotals(harness, accountId);
    expect(charges).toHaveLength(2);
    expect(charges[1]!.outputTokens).toBeLessThan(fullOutput);
  });

  it('an upstream that fails before producing anything bills nothing', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/chat/completions', { model: 'broken-model', messages: [{ role: 'user', content: 'x' }] }, secret);
    expect(response.status).toBe(503);
    const hang = await harness.post('/v1/chat/completions', { model: 'hang-model', messages: [{ role: 'user', content: 'x' }] }, secret);
    expect(hang.status).toBe(503);
    const { charges, account } = await ledgerTotals(harness, accountId);
    expect(charges).toHaveLength(0);
    expect(account.balanceNanos).toBe(usdToNanos('1'));
    expect(account.reservedNanos).toBe(0n);
  });
});
