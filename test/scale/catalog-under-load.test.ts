/**
 * The catalog changing under load (docs/architecture.md, "The catalog at runtime"; README, "Catalog
 * at runtime"): two instances on one PostgreSQL database with the Redis limiter, eight clients
 * alternating between them with streamed and non-streamed requests, while the catalog is changed
 * 20 times through the admin API, each version with other prices. No request fails, and each is
 * charged at the prices of exactly one version: one that was being served on its instance between
 * the moment it was sent and the moment its answer began (the version it started with), never a
 * later one and never a mix of two.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino, type Logger } from 'pino';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient, type AdminCall } from '../support/admin-client.js';
import { testCatalog } from '../support/catalog.js';
import { settledCharges } from '../support/charges.js';
import { postgresUrl, redisUrl } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble } from '../support/openai-upstream.js';
import { waitFor } from '../support/wait-for.js';

const ENV = { TEST_UPSTREAM_KEY: 'sk-from-env' };
const CLIENTS = 8;
const CHANGES = 20;
const CHANGE_SPACING_MS = 120;
const START_USD = '1000';
/** The double reports 11 input tokens (3 cached) and one output token per chunk. */
const CHUNKS = 5;
const CHUNK_DELAY_MS = 30;
type Document = { providers: Array<Record<string, unknown>>; models: Array<Record<string, unknown>> };

/**
 * Price level k: input (cached alike) k USD and output 1000·k USD per 1M tokens. Output prices so
 * far apart make a charge mixing two levels' prices match no level at all.
 */
function costAt(level: number): bigint {
  return BigInt(11 * level * 1000 + CHUNKS * level * 1000 * 1000);
}

function withModel(document: Document, level: number): Document {
  const prices = { input: String(level), cached_input: String(level), output: String(level * 1000) };
  const model = { id: 'load-model', prices, max_output_tokens: 64, targets: [{ provider: 'upstream', model: 'upstream-model' }] };
  return { ...document, models: [...document.models.filter((entry) => entry.id !== 'load-model'), model] };
}

interface Sent {
  client: number;
  instance: number;
  stream: boolean;
  sentAt: number;
  /** When the answer's headers arrived: the request had its version by then. */
  headersAt: number;
  requestId: string | null;
  failure: string | null;
}

/** When each catalog version was swapped in on an instance, from the gateway's own log line. */
function swapRecorder(): { swaps: Array<{ version: number; at: number }>; logger: Logger } {
  const swaps: Array<{ version: number; at: number }> = [];
  const logger: Logger = pino({ level: 'info' }, {
    write(line: string) {
      if (!line.includes('catalog version swapped in')) return;
      swaps.push({ version: (JSON.parse(line) as { catalogVersion: number }).catalogVersion, at: Date.now() });
    },
  });
  return { swaps, logger };
}

/** The versions served on an instance at some moment of [from, to]. */
function servedBetween(swaps: Array<{ version: number; at: number }>, from: number, to: number): number[] {
  const before = swaps.filter((swap) => swap.at <= from).at(-1);
  return [...(before === undefined ? [] : [before.version]), ...swaps.filter((swap) => swap.at > from && swap.at <= to).map((swap) => swap.version)];
}

async function send(target: Harness, secret: string, stream: boolean): Promise<Pick<Sent, 'headersAt' | 'requestId' | 'failure'>> {
  const response = await target.post('/v1/chat/completions', { model: 'load-model', messages: [{ role: 'user', content: 'hi' }], stream }, secret);
  const headersAt = Date.now();
  const requestId = response.headers.get('x-request-id');
  const text = await response.text();
  if (response.status !== 200) return { headersAt, requestId, failure: `status ${response.status}: ${text.slice(0, 200)}` };
  if (stream) {
    const content = text
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => (JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
      .join('');
    const complete = content === 'word '.repeat(CHUNKS) && text.trimEnd().endsWith('data: [DONE]');
    return { headersAt, requestId, failure: complete ? null : `incomplete stream: ${text.slice(-200)}` };
  }
  const content = (JSON.parse(text) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content;
  return { headersAt, requestId, failure: content === 'word '.repeat(CHUNKS) ? null : `unexpected answer: ${text.slice(0, 200)}` };
}

const enabled = Boolean(postgresUrl && redisUrl);
if (!enabled) console.info('catalog-under-load suite skipped: set TOLLGATE_TEST_POSTGRES_URL and TOLLGATE_TEST_REDIS_URL to run it.');

describe.skipIf(!enabled)('the catalog changing 20 times under load, on two instances on PostgreSQL and Redis', () => {
  let upstream: UpstreamDouble;
  const instances: Harness[] = [];
  const recorders = [swapRecorder(), swapRecorder()];
  let call: AdminCall;
  let operator = '';
  let seeded: Document;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ chunks: CHUNKS, chunkDelayMs: CHUNK_DELAY_MS });
    const catalog = testCatalog({ upstreamBaseUrl: upstream.baseUrl });
    const first = await startHarness({ engine: 'postgres', catalog, env: ENV, logger: recorders[0]!.logger });
    instances.push(first);
    instances.push(await startHarness({ engine: 'postgres', catalog, env: ENV, logger: recorders[1]!.logger, sharedDatabase: first.database, revisionPollMs: 100 }));
    call = adminClient(first.baseUrl);
    operator = (await createAdminToken(first.store, { role: 'operator' }, CLI_ACTOR)).secret;
    seeded = (await call('GET', '/catalog/document', operator)).body.document as Document;
  });

  afterAll(async () => {
    await instances[1]?.close();
    await instances[0]?.close();
    await upstream?.close();
  });

  it('fails no request and bills each at the prices of the version it started with', async () => {
    const started = Date.now();
    // Level 1 served on both instances before the load begins.
    const levelOf = new Map<number, number>();
    const initial = await call('PUT', '/catalog/document', operator, { document: withModel(seeded, 1), note: 'level 1' });
    expect(initial.status).toBe(200);
    levelOf.set(initial.body.version as number, 1);
    await waitFor(async () => recorders[1]!.swaps.some((swap) => swap.version === initial.body.version), 3_000);

    const accounts = await Promise.all(Array.from({ length: CLIENTS }, () => instances[0]!.newAccount(START_USD)));
    const sent: Sent[] = [];
    let changing = true;
    const clients = accounts.map(async (account, client) => {
      for (let n = 0; changing; n += 1) {
        const instance = (client + n) % 2;
        const stream = (client + n) % 3 !== 0;
        const sentAt = Date.now();
        const answer = await send(instances[instance]!, account.secret, stream).catch((error: unknown) => ({ headersAt: Date.now(), requestId: null, failure: String(error) }));
        sent.push({ client, instance, stream, sentAt, ...answer });
      }
    });

    for (let level = 2; level <= CHANGES + 1; level += 1) {
      await new Promise((resolve) => setTimeout(resolve, CHANGE_SPACING_MS));
      const changed = await call('PUT', '/catalog/document', operator, { document: withModel(seeded, level), note: `level ${level}` });
      expect(changed.status).toBe(200);
      levelOf.set(changed.body.version as number, level);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    changing = false;
    await Promise.all(clients);

    // 0 failed requests: every status 200, every stream complete.
    expect(sent.filter((request) => request.failure !== null)).toEqual([]);
    expect(sent.length).toBeGreaterThan(100);
    expect(sent.filter((request) => request.stream).length).toBeGreaterThan(50);
    // The other instance saw the newest version.
    expect(recorders[1]!.swaps.at(-1)?.version).toBe(Math.max(...levelOf.keys()));

    const charges = new Map<string, bigint>();
    for (const account of accounts) {
      for (const entry of await settledCharges(instances[0]!, account.accountId, START_USD)) {
        expect(entry).toMatchObject({ inputTokens: 11, cachedInputTokens: 3, outputTokens: CHUNKS });
        expect(charges.has(entry.requestId!)).toBe(false);
        charges.set(entry.requestId!, entry.amountNanos);
      }
    }
    // Every request charged once, and nothing else charged.
    expect(charges.size).toBe(sent.length);

    const levelByCost = new Map([...levelOf.values()].map((level) => [costAt(level), level]));
    const versionOfLevel = new Map([...levelOf].map(([version, level]) => [level, version]));
    const levelsSeen = new Set<number>();
    let ambiguous = 0;
    const lastLevel = new Map<string, number>();
    for (const request of sent) {
      const amount = charges.get(request.requestId!);
      expect(amount, `request ${request.requestId}`).toBeDefined();
      // Usage × the prices of exactly one version: no mixed prices.
      const level = levelByCost.get(amount!);
      expect(level, `request ${request.requestId} charged ${amount}`).toBeDefined();
      levelsSeen.add(level!);
      // The version served on its instance when it started: between sending and its answer's headers.
      const candidates = servedBetween(recorders[request.instance]!.swaps, request.sentAt, request.headersAt);
      if (candidates.length > 1) ambiguous += 1;
      expect(candidates, `request ${request.requestId} on instance ${request.instance}`).toContain(versionOfLevel.get(level!));
      // Never an older version than an earlier request of the same client on the same instance.
      const key = `${request.client}/${request.instance}`;
      expect(level!).toBeGreaterThanOrEqual(lastLevel.get(key) ?? 0);
      lastLevel.set(key, level!);
    }
    // The load spanned the changes: most versions were billed.
    expect(levelsSeen.size).toBeGreaterThanOrEqual(CHANGES / 2);
    console.info(
      `catalog under load: ${sent.length} requests (${sent.filter((request) => request.stream).length} streamed) over ${CHANGES} changes, ` +
        `${levelsSeen.size} of ${CHANGES + 1} price versions billed, ${ambiguous} requests overlapping a swap, ${Date.now() - started} ms`,
    );
  });
});
