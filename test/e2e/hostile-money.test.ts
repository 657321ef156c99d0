/**
 * Money under hostile input (issue "Hostile input"): a hold is an upper bound of what its request
 * can cost, a charge never exceeds its hold, so no balance goes below zero whatever clients or
 * upstreams do; bad usage reports bill the metered count; one request of a quarter million letters
 * neither freezes the instance nor escapes its hold.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/billing/money.js';
import { countTextTokens } from '../../src/protocol/tokens.js';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startHealthProbe } from '../support/health-probe.js';
import { HONEST_OUTPUT_TOKENS, hostileUsage } from '../support/hostile-usage.js';
import { startOpenAIUpstream, type UpstreamDouble } from '../support/openai-upstream.js';

interface Answer {
  status: number;
  body: unknown;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

/** A JSON schema of about `bytes` bytes, in a pass-through chat request. */
function schemaRequest(bytes: number, content = 'Hi'): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let index = 0, size = 0; size < bytes; index += 1) {
    const property = { type: 'string', description: `The value of field number ${index} of the record, as text.` };
    properties[`field_${index}`] = property;
    size += JSON.stringify(property).length + 16;
  }
  return {
    model: 'relay-model',
    messages: [{ role: 'user', content }],
    response_format: { type: 'json_schema', json_schema: { name: 'record', schema: { type: 'object', properties } } },
  };
}

describe.each(engines)('hostile money on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ usage: hostileUsage });
    harness = await startHarness({ engine, catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl }), env: { TEST_UPSTREAM_KEY: 'sk-upstream-secret' } });
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  /** Probes /healthz from another process until `send` has its whole answer: every probe must answer within 100 ms. */
  async function probeHealthWhile(send: () => Promise<Answer>): Promise<Answer> {
    const probe = await startHealthProbe(harness.baseUrl);
    const answer = await send();
    const answers = await probe.stop();
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(Math.max(...answers.map((answer) => answer.ms))).toBeLessThan(100);
    return answer;
  }

  /**
   * Posts a body already encoded, through node:http: the gateway shares this process's event loop,
   * and fetch would spend tens of milliseconds of it encoding and copying 8 MB that a client in a
   * process of its own spends in that process.
   */
  function postBytes(path: string, body: Buffer, secret: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const headers = { 'content-type': 'application/json', 'content-length': String(body.length), authorization: `Bearer ${secret}` };
      const outgoing = request(`${harness.baseUrl}${path}`, { method: 'POST', headers }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown }));
        incoming.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  async function settledAccount(accountId: string) {
    await waitFor(async () => (await harness.store.countOpenHolds(accountId)) === 0);
    const ledger = await harness.store.listLedger(accountId);
    const sum = (kind: string) => ledger.filter((entry) => entry.kind === kind).reduce((total, entry) => total + entry.amountNanos, 0n);
    const account = (await harness.store.findAccount(accountId))!;
    // The balance moves only with credits and charges; an excess is recorded, never debited.
    expect(account.balanceNanos).toBe(sum('credit') - sum('charge'));
    expect(account.balanceNanos).toBeGreaterThanOrEqual(0n);
    expect(account.reservedNanos).toBe(0n);
    return { account, ledger, excess: sum('excess'), charges: ledger.filter((entry) => entry.kind === 'charge') };
  }

  it('a 262,144-letter message is estimated at once: /healthz answers within 100 ms meanwhile, and the hold covers it', { retry: 2 }, async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const body = { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'a'.repeat(262_144) }], max_tokens: 16 };
    const answer = await probeHealthWhile(() => postBytes('/v1/chat/completions', Buffer.from(JSON.stringify(body)), secret));
    expect(answer.status).toBe(200);
    // The run is bounded by its bytes: at least what any byte-level tokenizer could count.
    expect((answer.body as { usage: { prompt_tokens: number } }).usage.prompt_tokens).toBeGreaterThanOrEqual(262_144);
    const { charges } = await settledAccount(accountId);
    expect(charges).toHaveLength(1);
    // A probe can lose its core to another test file running beside this one; not to this request.
  });

  it('an 8 MB body of random words is bounded at once: /healthz answers within 100 ms meanwhile, and the hold refuses it', { retry: 2 }, async () => {
    const { accountId, secret } = await harness.newAccount('1');
    // Random eight-letter words, written into one buffer (no million small strings for the
    // collector to walk while the probes run).
    let seed = 7;
    const text = Buffer.alloc(8_000_001);
    for (let index = 0; index < text.length; index += 1) {
      text[index] = index % 9 === 8 ? 0x20 : 97 + ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) % 26);
    }
    const body = JSON.stringify({ model: 'model-5.6-mini', messages: [{ role: 'user', content: text.toString('latin1').trim() }], max_tokens: 16 });
    const answer = await probeHealthWhile(() => postBytes('/v1/chat/completions', Buffer.from(body), secret));
    // About 8M tokens of input at $1/M: more than the $1 balance.
    expect(answer.status).toBe(403);
    const { charges } = await settledAccount(accountId);
    expect(charges).toEqual([]);
  });

  it('50 concurrent requests carrying a 1 MB schema on $0.05 are held at what the schema costs: the balance stays ≥ 0', { timeout: 60_000 }, async () => {
    const { accountId, secret } = await harness.newAccount('0.05');
    const body = JSON.stringify(schemaRequest(1_000_000));
    const responses = await Promise.all(Array.from({ length: 50 }, () => harness.post('/v1/chat/completions', body, secret)));
    await Promise.all(responses.map((response) => response.text()));
    const statuses = responses.map((response) => response.status);
    expect(statuses.every((status) => status === 200 || status === 403)).toBe(true);
    // Each needs about $0.25 of input: none fits in $0.05.
    expect(statuses.filter((status) => status === 403)).toHaveLength(50);
    const { account, excess } = await settledAccount(accountId);
    expect(account.balanceNanos).toBe(usdToNanos('0.05'));
    expect(excess).toBe(0n);
  });

  it('a small schema is admitted and the honest upstream\'s count stays within the hold (no excess)', async () => {
    const { accountId, secret } = await harness.newAccount('1');
    const response = await harness.post('/v1/chat/completions', schemaRequest(20_000), secret);
    expect(response.status).toBe(200);
    const { charges, excess } = await settledAccount(accountId);
    expect(charges).toHaveLength(1);
    expect(charges[0]!.inputTokens).toBeGreaterThan(4_000);
    expect(excess).toBe(0n);
  });

  it('an upstream reporting 100× the input leaves the balance ≥ 0, sequentially and in a burst of 40, and records the excess', async () => {
    const { accountId, secret } = await harness.newAccount('0.01');
    const body = { model: 'relay-model', messages: [{ role: 'user', content: 'report-100x please' }] };
    for (let index = 0; index < 5; index += 1) await (await harness.post('/v1/chat/completions', body, secret)).text();
    const burst = await Promise.all(Array.from({ length: 40 }, () => harness.post('/v1/chat/completions', body, secret)));
    expect(burst.some((response) => response.status === 403)).toBe(true);
    await Promise.all(burst.map((response) => response.text()));
    const { charges, excess } = await settledAccount(accountId);
    expect(charges.length).toBeGreaterThan(0);
    expect(excess).toBeGreaterThan(0n);
    const excessEntries = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'excess');
    expect(excessEntries.length).toBe(charges.length);
    const [row] = await harness.store.usageReport({ accountId });
    expect(row).toMatchObject({ model: 'relay-model', requests: charges.length, excessNanos: excess });
    const metrics = await (await fetch(`${harness.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/tollgate_billing_excess_nanos_total\{model="relay-model"\} [1-9]/);
  });

  it.each(['report-absurd', 'report-negative', 'report-no-counts'])('usage that fails the sanity check (%s) bills the metered count, not zero and not the claim', async (marker) => {
    const { accountId, secret } = await harness.newAccount('1');
    for (const stream of [false, true]) {
      const response = await harness.post('/v1/chat/completions', { model: 'relay-model', messages: [{ role: 'user', content: marker }], stream }, secret);
      expect(response.status).toBe(200);
      await response.text();
    }
    const { charges, excess } = await settledAccount(accountId);
    expect(charges).toHaveLength(2);
    for (const charge of charges) {
      expect(charge.outputTokens).toBe(countTextTokens('word '.repeat(HONEST_OUTPUT_TOKENS)));
      expect(charge.inputTokens).toBeGreaterThan(0);
      expect(charge.inputTokens).toBeLessThan(100);
      expect(charge.amountNanos).toBeGreaterThan(0n);
    }
    expect(excess).toBe(0n);
    const metrics = await (await fetch(`${harness.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/tollgate_usage_reports_rejected_total\{model="relay-model"\} [1-9]/);
  });
});
