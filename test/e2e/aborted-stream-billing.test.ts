/**
 * A stream that ends early is billed for what the upstream was sent: once the upstream accepted
 * the request (answered 200), it has read the whole prompt, so the input is billed even when the
 * client leaves before any text, and when the upstream reports no usage (it cut the stream, the
 * client left, or it never reports any) the input billed is the exact count of the prompt, not the
 * hold's bound (docs/architecture.md, Money). A long prompt of ordinary text (390,000 characters),
 * where the bound and the exact count differ by a factor of three; a real upstream double on
 * loopback that counts the input as OpenAI's chat format frames it, with the real tokenizer over
 * each message's whole text (test/support/scripted-stream.ts); the ledger must hold exactly that.
 * And a gateway killed while such a stream waits for its first text has checkpointed that input, so
 * its expired hold bills it (this part runs the built gateway, dist/cli/main.js).
 */
import BetterSqlite3 from 'better-sqlite3';
import { countTokens } from 'gpt-tokenizer';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { boundInputTokens } from '../../src/protocol/input-bound.js';
import { TOKENS_PER_IMAGE } from '../../src/protocol/tokens.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, engines, type TestDatabase } from '../support/databases.js';
import { startGatewayProcess, writeCatalog, type GatewayProcess } from '../support/gateway-process.js';
import { startHarness, type Harness } from '../support/harness.js';
import { anthropicInputUsage, hungUp, scriptedStream, upstreamInputTokens, type StreamScript } from '../support/scripted-stream.js';
import type { ReceivedRequest } from '../support/upstream-double.js';
import { startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';
import { waitFor } from '../support/wait-for.js';

const PRICES = { input: '1', cached_input: '0.5', cache_write: '1.25', output: '4' };

/** Ordinary prose of `length` characters: words, punctuation, paragraphs; the same every run. */
function prose(length: number): string {
  const words = ['the', 'gateway', 'reads', 'a', 'long', 'conversation', 'about', 'billing,', 'streams', 'and', 'agents', 'that', 'press', 'Escape', 'before', 'answers', 'end.', 'Tokens', 'are', 'counted', 'once;', 'money', 'is', 'exact.'];
  let seed = 7;
  const parts: string[] = [];
  let total = 0;
  while (total < length) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    const word = words[seed % words.length]!;
    const separator = seed % 97 === 0 ? '\n\n' : ' ';
    parts.push(word, separator);
    total += word.length + separator.length;
  }
  return parts.join('').slice(0, length);
}

const PROMPT = prose(390_000);
const DELTAS = ['The answer ', 'so far, ', 'cut short ', 'by Escape.'];
const OUTPUT_TOKENS = countTokens(DELTAS.join(''));

interface Route {
  name: string;
  path: string;
  body: Record<string, unknown>;
  /** The upstream speaks Anthropic's Messages: its `message_start` says what it read, and that is billed. */
  anthropic?: true;
}

const routes: Route[] = [
  { name: 'chat, passed through', path: '/v1/chat/completions', body: { model: 'long-model', stream: true, messages: [{ role: 'user', content: PROMPT }] } },
  { name: 'responses, passed through', path: '/v1/responses', body: { model: 'long-model', stream: true, store: false, input: PROMPT } },
  { name: 'responses, translated onto a Chat upstream', path: '/v1/responses', body: { model: 'translated-model', stream: true, store: false, input: PROMPT } },
  { name: 'messages, translated onto a Chat upstream', path: '/v1/messages', body: { model: 'translated-model', stream: true, max_tokens: 512, messages: [{ role: 'user', content: PROMPT }] } },
  { name: 'messages, passed through to Anthropic', path: '/v1/messages', body: { model: 'claude-model', stream: true, max_tokens: 512, messages: [{ role: 'user', content: PROMPT }] }, anthropic: true },
  { name: 'chat, translated onto Anthropic', path: '/v1/chat/completions', body: { model: 'claude-model', stream: true, messages: [{ role: 'user', content: PROMPT }] }, anthropic: true },
];

/** The input billed, as the ledger holds it: what an Anthropic upstream reported, else the double's count (as the gateway counts it). */
function expectedInput(route: Route, received: ReceivedRequest): { inputTokens: number; cachedInputTokens: number; cacheWriteInputTokens: number; costNanos: bigint } {
  if (route.anthropic !== true) {
    const inputTokens = upstreamInputTokens(received);
    return { inputTokens, cachedInputTokens: 0, cacheWriteInputTokens: 0, costNanos: costOfTokens(inputTokens, usdToNanos(PRICES.input)) };
  }
  const reported = anthropicInputUsage(received);
  return {
    inputTokens: reported.input_tokens + reported.cache_read_input_tokens + reported.cache_creation_input_tokens,
    cachedInputTokens: reported.cache_read_input_tokens,
    cacheWriteInputTokens: reported.cache_creation_input_tokens,
    costNanos:
      costOfTokens(reported.input_tokens, usdToNanos(PRICES.input)) +
      costOfTokens(reported.cache_read_input_tokens, usdToNanos(PRICES.cached_input)) +
      costOfTokens(reported.cache_creation_input_tokens, usdToNanos(PRICES.cache_write)),
  };
}

interface Scenario {
  name: string;
  script: StreamScript;
  /** When the client leaves: after the first event, once the last delta arrived, or never (it reads to the end). */
  leave: 'first-event' | 'last-delta' | 'never';
  outputTokens: number;
}

const scenarios: Scenario[] = [
  { name: 'the client leaves after the first event, before any text', script: { deltas: [], then: 'hold' }, leave: 'first-event', outputTokens: 0 },
  { name: 'the client leaves after some text', script: { deltas: DELTAS, then: 'hold' }, leave: 'last-delta', outputTokens: OUTPUT_TOKENS },
  { name: 'the upstream cuts the stream after some text', script: { deltas: DELTAS, then: 'cut' }, leave: 'never', outputTokens: OUTPUT_TOKENS },
  { name: 'the upstream finishes without reporting usage', script: { deltas: DELTAS, then: 'finish-without-usage' }, leave: 'never', outputTokens: OUTPUT_TOKENS },
];

/** The catalog of both suites: one upstream, passed through or translated onto Chat. */
function catalogFor(upstream: UpstreamDouble, billing?: Record<string, number>): Record<string, unknown> {
  const timeouts = { first_byte_ms: 30_000, idle_ms: 30_000 };
  return {
    providers: [
      { name: 'openai', type: 'openai', base_url: upstream.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts },
      { name: 'openai-chat', type: 'openai', api: 'chat', base_url: upstream.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts },
      { name: 'claude', type: 'anthropic', base_url: upstream.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts },
    ],
    models: [
      { id: 'long-model', prices: PRICES, max_output_tokens: 512, targets: [{ provider: 'openai', model: 'upstream-model' }] },
      { id: 'translated-model', prices: PRICES, max_output_tokens: 512, targets: [{ provider: 'openai-chat', model: 'upstream-model' }] },
      { id: 'claude-model', prices: PRICES, max_output_tokens: 512, targets: [{ provider: 'claude', model: 'upstream-model' }] },
    ],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
    ...(billing === undefined ? {} : { billing }),
  };
}

// Anthropic always reports usage in message_delta: a stream that finishes without any is not one it sends.
const cases = routes.flatMap((route) =>
  scenarios.filter((scenario) => route.anthropic !== true || scenario.script.then !== 'finish-without-usage').map((scenario) => ({ label: `${route.name}: ${scenario.name}`, route, scenario })),
);

/** Reads the answer until the client means to leave, then leaves (or reads it to its end). */
async function readThenLeave(response: Response, leave: Scenario['leave']): Promise<void> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const lastDelta = DELTAS.at(-1)!;
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    text += decoder.decode(value, { stream: true });
    if ((leave === 'first-event' && text.includes('\n\n')) || (leave === 'last-delta' && text.includes(lastDelta))) {
      await reader.cancel();
      return;
    }
  }
}

describe.each(engines)('streams that end early are billed for what the upstream was sent, on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(scriptedStream({ deltas: [], then: 'hold' }));
    harness = await startHarness({ engine, catalog: catalogFor(upstream), env: { TEST_UPSTREAM_KEY: 'sk-upstream' } });
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it('the prompt is one where the hold bound and the exact count differ by far', () => {
    const bound = boundInputTokens(routes[0]!.body, { imageTokens: TOKENS_PER_IMAGE });
    expect(countTokens(PROMPT)).toBeGreaterThan(50_000);
    expect(bound).toBeGreaterThan(3 * countTokens(PROMPT));
  });

  it.each(cases)('$label', async ({ route, scenario }) => {
    upstream.answer(scriptedStream(scenario.script));
    const { accountId, secret } = await harness.newAccount('10');
    const response = await harness.post(route.path, route.body, secret, { 'anthropic-version': '2023-06-01' });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    await readThenLeave(response, scenario.leave);

    const received = upstream.requests.at(-1)!;
    if (scenario.script.then === 'hold') expect(await hungUp(received)).toBe(true);
    await expect.poll(() => harness.store.countOpenHolds(accountId), { timeout: 10_000 }).toBe(0);
    const { inputTokens, cachedInputTokens, cacheWriteInputTokens, costNanos } = expectedInput(route, received);
    const cost = costNanos + costOfTokens(scenario.outputTokens, usdToNanos(PRICES.output));
    const charges = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toEqual([expect.objectContaining({ requestId, inputTokens, cachedInputTokens, cacheWriteInputTokens, outputTokens: scenario.outputTokens, amountNanos: cost })]);
    expect((await harness.store.findAccount(accountId))!).toMatchObject({ balanceNanos: usdToNanos('10') - cost, reservedNanos: 0n });
  });
});

describe.each(engines)('an upstream that answers 200, then refuses in its stream before any answer, on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(scriptedStream({ deltas: [], then: 'refuse' }));
    harness = await startHarness({ engine, catalog: catalogFor(upstream), env: { TEST_UPSTREAM_KEY: 'sk-upstream' } });
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it.each([routes[0]!, routes.find((route) => route.name === 'messages, passed through to Anthropic')!])('bills nothing: $name', async (route) => {
    const { accountId, secret } = await harness.newAccount('10');
    const response = await harness.post(route.path, route.body, secret, { 'anthropic-version': '2023-06-01' });
    expect(response.status).toBe(200);
    // The client is told in its protocol that the answer failed.
    expect(await response.text()).toMatch(/error/);
    await expect.poll(() => harness.store.countOpenHolds(accountId), { timeout: 10_000 }).toBe(0);
    expect((await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge')).toEqual([]);
    expect((await harness.store.findAccount(accountId))!).toMatchObject({ balanceNanos: usdToNanos('10'), reservedNanos: 0n });
  });
});

/** How many of the holds of `requestIds` have checkpointed a count of their input, read straight from their rows. */
async function holdsWithCheckpointedInput(database: TestDatabase, requestIds: string[]): Promise<number> {
  if (database.engine === 'sqlite') {
    const connection = new BetterSqlite3(database.url.slice('sqlite:'.length), { readonly: true });
    try {
      const row = connection.prepare(`SELECT count(*) AS n FROM holds WHERE checkpoint_input_tokens > 0 AND request_id IN (${requestIds.map(() => '?').join(', ')})`).get(...requestIds) as { n: number };
      return row.n;
    } finally {
      connection.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM holds WHERE checkpoint_input_tokens > 0 AND request_id = ANY($1)', [requestIds]);
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

/**
 * One gateway per engine, one stream per route (each its own account), opened one after another so
 * that the upstream's nth request is the nth route's. Once every hold has checkpointed its input,
 * the gateway is killed; each row then checks its own route's charge.
 */
describe.each(engines)('a gateway killed while an accepted stream waits for its first text, on %s', (engine) => {
  const killedRoutes = routes.slice(0, 3);
  let database: TestDatabase;
  let store: Store;
  let upstream: UpstreamDouble;
  let gateway: GatewayProcess | undefined;
  const streams: Array<{ accountId: string; requestId: string | null; received: ReceivedRequest }> = [];
  let released: number;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    store = await openStore(database.url);
    upstream = await startUpstreamDouble(scriptedStream({ deltas: [], then: 'hold' }));
    // Checkpoints five times a second; a TTL far beyond the test, so that only the sweep below ends the holds.
    const catalog = writeCatalog(catalogFor(upstream, { hold_ttl_seconds: 600, checkpoint_seconds: 0.2 }));
    gateway = await startGatewayProcess({ TOLLGATE_DATABASE_URL: database.url, TOLLGATE_CONFIG: catalog, TEST_UPSTREAM_KEY: 'sk-upstream', TOLLGATE_ACCEPT_LOCAL_LIMITS: '1' });
    for (const route of killedRoutes) {
      const account = await createAccount(store, { name: `crash-${Math.random().toString(36).slice(2)}`, balanceUsd: '10' }, CLI_ACTOR);
      const { secret } = await createKey(store, { accountRef: account.id }, CLI_ACTOR);
      const response = await fetch(`${gateway.baseUrl}${route.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(route.body),
      });
      expect(response.status, route.name).toBe(200);
      await response.body!.getReader().read();
      expect(upstream.requests, route.name).toHaveLength(streams.length + 1);
      streams.push({ accountId: account.id, requestId: response.headers.get('x-request-id'), received: upstream.requests.at(-1)! });
    }
    // A checkpoint starts the count of each input; a later one writes it.
    const requestIds = streams.map((stream) => stream.requestId ?? '');
    await waitFor(async () => (await holdsWithCheckpointedInput(database, requestIds)) === killedRoutes.length, 20_000);
    await gateway.kill();
    // The process is gone; its holds are found expired (here: an hour from now) and settle their last checkpoints.
    released = await store.releaseExpiredHolds(new Date(Date.now() + 3_600_000));
  }, 60_000);

  afterAll(async () => {
    await gateway?.kill();
    await upstream?.close();
    await store?.close();
    await database?.drop();
  });

  it('every killed stream\'s hold is released by the sweep', () => {
    expect(released).toBe(killedRoutes.length);
  });

  it.each(killedRoutes.map((route, index) => ({ ...route, index })))('bills the input from its checkpoint: $name', async ({ index }) => {
    const { accountId, requestId, received } = streams[index]!;
    const inputTokens = upstreamInputTokens(received);
    const charges = (await store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges).toEqual([expect.objectContaining({ requestId, inputTokens, outputTokens: 0, amountNanos: costOfTokens(inputTokens, usdToNanos(PRICES.input)) })]);
  });
});
