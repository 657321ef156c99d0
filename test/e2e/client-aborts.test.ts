/**
 * Clients that give up early: they must not count against an upstream's health (three of them
 * used to take a model offline for everyone), and a client gone before the handler was ready must
 * leave no hold behind and must not keep a drain (SIGTERM) waiting forever.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.js';
import type { Limiter } from '../../src/ratelimit/limiter.js';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';
import { CHAT_COMPLETION, chatChunk } from '../support/chat-bodies.js';
import { startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Answers after `delayMs`, streamed in slow chunks or as one JSON body. */
function slowAnswer(delayMs: number) {
  return async (request: { body: Record<string, unknown> }, response: ServerResponse) => {
    const stream = request.body.stream === true;
    await sleep(delayMs);
    if (response.destroyed) return;
    if (!stream) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(CHAT_COMPLETION);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < 10 && !response.destroyed; i++) {
      response.write(chatChunk(`w${i} `));
      await sleep(100);
    }
    response.end('data: [DONE]\n\n');
  };
}

async function abortAfter(harness: Harness, secret: string, body: object, ms: number): Promise<void> {
  const controller = new AbortController();
  const pending = fetch(`${harness.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    signal: controller.signal,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify(body),
  })
    .then((response) => response.text())
    .catch(() => 'aborted');
  await sleep(ms);
  controller.abort();
  await pending;
}

describe('clients that give up early', () => {
  let harness: Harness | undefined;
  let upstream: UpstreamDouble | undefined;
  afterEach(async () => {
    await harness?.close();
    await upstream?.close();
    harness = undefined;
    upstream = undefined;
  });

  it('do not count against the upstream: a model stays available after three of them', async () => {
    upstream = await startUpstreamDouble(slowAnswer(600));
    harness = await startHarness({ catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl }), env: { TEST_UPSTREAM_KEY: 'sk-x' } });
    const { secret } = await harness.newAccount('10');
    const body = { model: 'relay-model', messages: [{ role: 'user', content: 'hi' }] };
    for (let i = 0; i < 3; i++) await abortAfter(harness, secret, body, 150);
    const answer = await harness.post('/v1/chat/completions', body, secret);
    expect(answer.status).toBe(200);
  });

  it.each([true, false])('gone before the handler was ready (stream: %s): no hold left, and a drain does not hang', async (stream) => {
    upstream = await startUpstreamDouble(slowAnswer(0));
    const memory = createMemoryLimiter();
    // A limit store that answers slowly (a remote Redis under load), so the client leaves while
    // the handler is still checking the token limit.
    const slowLimiter: Limiter = {
      consume: async (subject, points, limit, windowSeconds) => {
        if (subject.startsWith('tok:')) await sleep(300);
        return memory.consume(subject, points, limit, windowSeconds);
      },
      close: () => memory.close(),
    };
    harness = await startHarness({
      catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl, tokensPerMinute: 10_000_000 }),
      env: { TEST_UPSTREAM_KEY: 'sk-x' },
      limiter: slowLimiter,
    });
    const { secret, accountId } = await harness.newAccount('10');
    await abortAfter(harness, secret, { model: 'relay-model', stream, messages: [{ role: 'user', content: 'hi' }] }, 100);
    await expect.poll(() => harness!.store.countOpenHolds(accountId), { timeout: 3000 }).toBe(0);
    expect((await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge')).toHaveLength(0);
    const closing = harness.gateway.close().then(() => 'closed');
    expect(await Promise.race([closing, sleep(3000).then(() => 'still draining')])).toBe('closed');
  });

  it.each([
    [true, 450, 200],
    [false, 150, 499],
  ])('leave a request log row with what was billed (stream: %s)', async (stream, leaveAfterMs, status) => {
    upstream = await startUpstreamDouble(slowAnswer(stream ? 0 : 600));
    harness = await startHarness({ catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl }), env: { TEST_UPSTREAM_KEY: 'sk-x' } });
    const { secret, accountId } = await harness.newAccount('10');
    await abortAfter(harness, secret, { model: 'relay-model', stream, messages: [{ role: 'user', content: 'hi' }] }, leaveAfterMs);
    await expect.poll(async () => (await harness!.store.listRequestLog({ accountId }, { limit: 5 })).rows, { timeout: 5000 }).toHaveLength(1);
    const [row] = (await harness.store.listRequestLog({ accountId }, { limit: 5 })).rows;
    const charged = (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge');
    expect(row).toMatchObject({ status, stream, model: 'relay-model' });
    // A stream cut by its client is billed for what it produced, and its row says what that cost.
    expect(row?.costNanos).toBe(charged[0]?.amountNanos ?? 0n);
    if (stream) expect(row?.outputTokens).toBeGreaterThan(0);
  });
});
