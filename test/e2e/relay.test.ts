/**
 * The openai provider through the real server: same-protocol requests are passed through with
 * unknown fields intact, the upstream is always asked for usage (and the usage chunk is removed
 * again when the client did not ask for it), the upstream gets the operator's key, never the
 * client's, and billing uses the usage the upstream reported.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble } from '../support/openai-upstream.js';

const UPSTREAM_SECRET = 'sk-upstream-secret-value';

describe.each(engines)('relaying to an OpenAI-compatible upstream on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let secret: string;
  let accountId: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ chunks: 6 });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    harness = await startHarness({
      engine,
      catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl }),
      env: { TEST_UPSTREAM_KEY: UPSTREAM_SECRET },
      logger: pino({ level: 'info' }, sink),
    });
    ({ secret, accountId } = await harness.newAccount('2'));
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it('non-stream: the upstream body comes back with its unknown fields; the request keeps the client fields', async () => {
    const response = await harness.post(
      '/v1/chat/completions',
      { model: 'relay-model', messages: [{ role: 'user', content: 'hi' }], logit_bias: { '50256': -100 }, seed: 7, max_tokens: 99999 },
      secret,
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.upstream_extra).toBe('kept');
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({ model: 'upstream-model', logit_bias: { '50256': -100 }, seed: 7 });
    // Capped at the model's max_output_tokens (the hold covers no more).
    expect(sent.body.max_tokens).toBe(512);
    expect(sent.headers.authorization).toBe(`Bearer ${UPSTREAM_SECRET}`);
  });

  it('stream without include_usage: the upstream is asked for usage, the client never sees it, billing uses it', async () => {
    const before = (await harness.store.listLedger(accountId)).length;
    const response = await harness.post('/v1/chat/completions', { model: 'relay-model', messages: [{ role: 'user', content: 'hi' }], stream: true }, secret);
    const text = await response.text();
    expect(upstream.requests.at(-1)!.body.stream_options).toMatchObject({ include_usage: true });
    const frames = text.trim().split('\n\n');
    expect(frames.at(-1)).toBe('data: [DONE]');
    expect(text).not.toContain('"prompt_tokens"');
    expect((text.match(/"content":"word "/g) ?? []).length).toBe(6);
    const ledger = await harness.store.listLedger(accountId);
    expect(ledger).toHaveLength(before + 1);
    expect(ledger.at(-1)).toMatchObject({ kind: 'charge', inputTokens: 11, cachedInputTokens: 3, outputTokens: 6 });
  });

  it('stream with include_usage: the usage chunk reaches the client before [DONE]', async () => {
    const stream = await harness.client(secret).chat.completions.create({
      model: 'relay-model',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 6 });
  });

  it('logs carry the request id and never a secret', async () => {
    const response = await harness.post('/v1/chat/completions', { model: 'relay-model', messages: [{ role: 'user', content: 'log me' }] }, secret);
    const requestId = response.headers.get('x-request-id')!;
    await response.text();
    const mine = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.requestId === requestId);
    expect(mine.map((line) => line.msg)).toEqual(expect.arrayContaining(['settled', 'answered']));
    const all = logLines.join('\n');
    expect(all).not.toContain(secret);
    expect(all).not.toContain(UPSTREAM_SECRET);
  });
});
