/**
 * `POST /v1/messages` to an Anthropic upstream: passed through. The client's body reaches the
 * upstream with its own fields and its betas, only the model, the output cap and the service tier
 * changed; the upstream's events come back byte for byte; the ledger prices the upstream's own
 * usage, cache reads and cache writes at their prices, to the nano-USD. The upstream is a real HTTP
 * server replaying Anthropic wire captures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../../src/providers/anthropic/__fixtures__/fixtures.js';
import { fixture as openaiFixture } from '../../src/providers/openai/__fixtures__/fixtures.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { json, sse, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';

const UPSTREAM_SECRET = 'sk-ant-api03-passthrough-upstream-secret';
const UPSTREAM_MODEL = 'claude-sonnet-4-5-20250929';
/** USD per 1M tokens → nano-USD per token ×1,000: input 3, cache reads 0.3, cache writes 3.75, output 15. */
const PRICES = { input: '3', cached_input: '0.3', cache_write: '3.75', output: '15' };
const priced = (fresh: number, cacheRead: number, cacheWrite: number, output: number) => BigInt(fresh * 3_000 + cacheRead * 300 + cacheWrite * 3_750 + output * 15_000);

const BETAS = 'interleaved-thinking-2025-05-14,context-management-2025-06-27';

describe.each(engines)('Anthropic Messages passed through to an Anthropic upstream on %s', (engine) => {
  let upstream: UpstreamDouble;
  let harness: Harness;
  let secret: string;
  let accountId: string;

  const send = (body: Record<string, unknown>) =>
    harness.post('/v1/messages?beta=true', { model: 'claude-model', max_tokens: 100_000, messages: [{ role: 'user', content: 'Weather?' }], ...body }, null, {
      'x-api-key': secret,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': BETAS,
    });
  const lastCharge = async () => (await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge').at(-1);

  beforeAll(async () => {
    upstream = await startUpstreamDouble(sse(fixture('text-stream.sse')));
    harness = await startHarness({
      engine,
      catalog: {
        providers: [{ name: 'claude', type: 'anthropic', base_url: upstream.baseUrl, api_key_env: 'TEST_ANTHROPIC_KEY', timeouts: { first_byte_ms: 2_000, idle_ms: 2_000 } }],
        models: [{ id: 'claude-model', prices: PRICES, max_output_tokens: 8_192, reasoning_efforts: ['low', 'medium', 'high'], targets: [{ provider: 'claude', model: UPSTREAM_MODEL }] }],
      },
      env: { TEST_ANTHROPIC_KEY: UPSTREAM_SECRET },
    });
    ({ secret, accountId } = await harness.newAccount('10'));
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it('streams the upstream events through as they are, and bills cache reads and writes at their prices', async () => {
    upstream.answer(sse(fixture('text-stream.sse'), 40));
    const response = await send({ stream: true, context_management: { edits: [] }, metadata: { user_id: 'u1' }, thinking: { type: 'enabled', budget_tokens: 10_000 } });
    expect(response.status).toBe(200);
    // Byte for byte, but for the model: answers name the catalog id the client asked for.
    expect(await response.text()).toBe(fixture('text-stream.sse').replace(`"model":"${UPSTREAM_MODEL}"`, '"model":"claude-model"'));

    const received = upstream.requests.at(-1)!;
    expect(received.path).toBe('/v1/messages');
    expect(received.headers['anthropic-beta']).toBe(BETAS);
    expect(received.headers['x-api-key']).toBe(UPSTREAM_SECRET);
    expect(received.headers['anthropic-version']).toBe('2023-06-01');
    expect(received.body).toMatchObject({
      model: UPSTREAM_MODEL,
      // Capped by the model's max_output_tokens, with the thinking budget kept below it.
      max_tokens: 8_192,
      thinking: { type: 'enabled', budget_tokens: 8_191 },
      service_tier: 'standard_only',
      context_management: { edits: [] },
      metadata: { user_id: 'u1' },
      stream: true,
    });

    // text-stream.sse: 14 fresh, 2,048 cache reads, 312 cache writes, 12 out.
    const charge = await lastCharge();
    expect(charge).toMatchObject({ inputTokens: 14 + 2_048 + 312, cachedInputTokens: 2_048, cacheWriteInputTokens: 312, outputTokens: 12 });
    expect(charge?.amountNanos).toBe(priced(14, 2_048, 312, 12));
  });

  it("answers a whole message as the upstream sent it, billed from the upstream's usage", async () => {
    upstream.answer(json(200, fixture('message.json')));
    const response = await send({});
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ...JSON.parse(fixture('message.json')), model: 'claude-model' });
    expect(upstream.requests.at(-1)!.body.stream).toBeUndefined();
    const charge = await lastCharge();
    expect(charge?.amountNanos).toBe(priced(410, 2_048, 0, 96));
  });

  it("replaces an upstream's in-band error with the gateway's own, and bills what streamed", async () => {
    upstream.answer(sse(fixture('error-mid-stream.sse')));
    const text = await (await send({ stream: true })).text();
    expect(text).toContain('event: content_block_delta');
    expect(text.endsWith('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"Overloaded"}}\n\n')).toBe(true);
    expect(text).not.toContain('req_011CVBz4TxGS5tfYkwpY2Jqu');
    // Cut short: the output that streamed is counted, as on every route.
    const charge = await lastCharge();
    expect(charge?.outputTokens).toBeGreaterThan(0);
    expect(charge?.amountNanos).toBeGreaterThan(0n);
  });

  it("ends a stream cut short with an error event, never message_stop", async () => {
    const capture = fixture('text-stream.sse');
    upstream.answer(sse(capture.slice(0, capture.indexOf('event: content_block_stop'))));
    const text = await (await send({ stream: true })).text();
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]+"\}\}\n\n$/);
    expect(text).not.toContain('message_stop');
  });

  it('refuses an effort the model does not allow, before the upstream, naming the field', async () => {
    const before = upstream.requests.length;
    const response = await send({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' } });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: "output_config.effort: Unsupported value: 'max' is not supported with the model 'claude-model'. Supported values are: 'low', 'medium', 'high'." },
    });
    expect(upstream.requests.length).toBe(before);
  });

  it("refuses what the upstream refuses, in Anthropic's shape with the upstream's reason", async () => {
    upstream.answer(json(400, fixture('error-400.json')));
    const response = await send({});
    expect(response.status).toBe(400);
    const body = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('max_tokens');
  });
});

describe('Anthropic Messages failing over from an Anthropic target to a chat one', () => {
  let claude: UpstreamDouble;
  let chat: UpstreamDouble;
  let harness: Harness;
  afterAll(async () => {
    await harness?.close();
    await claude?.close();
    await chat?.close();
  });

  it('passes through to the first target and, when it is overloaded, translates for the next', async () => {
    claude = await startUpstreamDouble(json(529, fixture('error-529.json')));
    chat = await startUpstreamDouble(sse(openaiFixture('chat-text-stream.sse')));
    harness = await startHarness({
      catalog: {
        providers: [
          { name: 'claude', type: 'anthropic', base_url: claude.baseUrl, api_key_env: 'TEST_ANTHROPIC_KEY' },
          { name: 'chat', type: 'openai', api: 'chat', base_url: chat.baseUrl, api_key_env: 'TEST_CHAT_KEY' },
        ],
        models: [{ id: 'claude-model', prices: PRICES, targets: [{ provider: 'claude', model: UPSTREAM_MODEL, priority: 0 }, { provider: 'chat', model: 'gpt-4.1-mini', priority: 1 }] }],
      },
      env: { TEST_ANTHROPIC_KEY: UPSTREAM_SECRET, TEST_CHAT_KEY: 'sk-chat-secret' },
    });
    const { secret } = await harness.newAccount('10');
    const response = await harness.post('/v1/messages', { model: 'claude-model', max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'Weather?' }] }, null, { 'x-api-key': secret });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"text":"Oslo is"');
    expect(text.trimEnd().endsWith('event: message_stop\ndata: {"type":"message_stop"}')).toBe(true);
    expect(claude.requests).toHaveLength(1);
    expect(chat.requests).toHaveLength(1);
    expect(chat.requests[0]!.body).toMatchObject({ model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'Weather?' }] });
  });
});
