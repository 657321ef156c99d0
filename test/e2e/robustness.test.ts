/**
 * Bad input of every kind gets a clear 4xx in the error format, never a 500 or a stack trace;
 * per-key token limits; limit headers on answers after the key check; disabled accounts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const deep = (depth: number): unknown => (depth === 0 ? 'x' : { nested: deep(depth - 1) });

const BAD_BODIES: unknown[] = [
  {},
  { model: null, messages: null },
  { model: 42, input: 'x' },
  { model: 'model-5.6', messages: [] },
  { model: 'model-5.6', messages: [null] },
  { model: 'model-5.6', messages: [{}] },
  { model: 'model-5.6', messages: [{ role: 'user' }] },
  { model: 'model-5.6', messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }] },
  { model: 'model-5.6', messages: [{ role: 'assistant', content: null }] },
  { model: 'model-5.6', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'bad name!' } }] },
  { model: 'model-5.6', messages: [{ role: 'user', content: 'x' }], tools: 'all' },
  { model: 'model-5.6', messages: [{ role: 'user', content: 'x' }], tool_choice: { type: 'function', function: { name: 'missing' } } },
  { model: 'model-5.6', messages: [{ role: 'user', content: 'x' }], stream: 'yes' },
  { model: 'model-5.6', messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } },
  { model: 'model-5.6', messages: [{ role: 'user', content: 'x' }], max_tokens: 1e30 },
  { model: 'model-5.6', messages: [{ role: 'user', content: 'x' }], n: 3 },
  { model: 'model-5.6', messages: [{ role: 'user', content: deep(200) }] },
  { model: 'model-5.6', input: [{ type: 'function_call_output' }] },
  { model: 'model-5.6', input: [{ role: 'user', content: [{ type: 'input_text' }] }] },
  { model: 'model-5.6', input: 'x', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'bad name!' }] }] },
  { model: 'model-5.6', input: 'x', reasoning: 'high' },
  { model: 'model-5.6', input: 'x', metadata: { a: 1 } },
  { model: 'model-5.6', input: 'x', background: true },
  ['model-5.6'],
  'just a string',
  12345,
];

/** Bodies a JS literal cannot express: an own `__proto__` key, duplicate keys, lone surrogates. */
const RAW_BAD_BODIES = [
  '{"model":"model-5.6","messages":[{"role":"user","content":"x"}],"input":"x","__proto__":{"polluted":true}}',
  '{"model":"model-5.6","model":7,"messages":[{"role":"user","content":"x"}],"input":"x"}',
  '{"model":"model-5.6","messages":[{"role":"user","content":"x"}],"input":"x","stream":true,"stream":"no"}',
];

describe.each(engines)('robustness on %s', (engine) => {
  let harness: Harness;
  let secret: string;

  beforeAll(async () => {
    harness = await startHarness({ engine, catalog: testCatalog({ tokensPerMinute: 100_000 }) });
    ({ secret } = await harness.newAccount('5'));
  });
  afterAll(async () => harness?.close());

  it('no bad body on either endpoint gets a 5xx or leaks internals', async () => {
    for (const path of ['/v1/chat/completions', '/v1/responses']) {
      for (const body of [...BAD_BODIES.map((value) => JSON.stringify(value)), ...RAW_BAD_BODIES]) {
        const response = await harness.post(path, body, secret);
        const text = await response.text();
        expect(response.status, `${path} ${body.slice(0, 80)}: ${text}`).toBe(400);
        const parsed = JSON.parse(text) as { error: { message: string; type: string } };
        expect(['invalid_request_error', 'service_api_error']).toContain(parsed.error.type);
        expect(text).not.toMatch(/\bat \S+ \(|node_modules|\.ts:\d+|TypeError|undefined/);
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('client text that spells special tokens is ordinary text', async () => {
    const completion = await harness.client(secret).chat.completions.create({
      model: 'model-5.6',
      messages: [{ role: 'user', content: 'Say <|endoftext|> and <|im_start|> please' }],
    });
    expect(completion.choices[0]?.message.content).toContain('<|endoftext|>');
  });

  it('per-key tokens per minute: 429 once the estimate exceeds the window, with the tokens headers', async () => {
    const { secret: limited } = await harness.newAccount('5', { tokensPerMinute: 1200 });
    const body = { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 500 };
    const first = await harness.post('/v1/chat/completions', body, limited);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('1200');
    expect(Number(first.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(1200);
    await first.text();
    expect((await harness.post('/v1/chat/completions', body, limited)).status).toBe(200);
    const refused = await harness.post('/v1/chat/completions', body, limited);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.text()).toBe('{"error":{"message":"Rate limit exceeded.","type":"service_api_error","code":""}}');
    // What was refused did not count: a small request still fits in what is left of the window.
    const small = await harness.post('/v1/chat/completions', { ...body, max_tokens: 10 }, limited);
    expect(small.status).toBe(200);
  });

  it('a request larger than the whole tokens-per-minute window is admitted on a fresh window', async () => {
    const { secret: tight } = await harness.newAccount('5', { tokensPerMinute: 100 });
    const big = await harness.post('/v1/chat/completions', { model: 'model-5.6-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 500 }, tight);
    expect(big.status).toBe(200);
    expect(big.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
  });

  it('answers after the key check carry the request-limit headers, errors included', async () => {
    const malformed = await harness.post('/v1/chat/completions', '{', secret);
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('x-ratelimit-limit-requests')).toBe('10000');
    const unknownModel = await harness.post('/v1/responses', { model: 'nope', input: 'x' }, secret);
    expect(unknownModel.status).toBe(503);
    expect(unknownModel.headers.get('x-ratelimit-remaining-requests')).toMatch(/^\d+$/);
  });

  it('a disabled account: its keys get 401 at once after an in-process change, and again when re-enabled work', async () => {
    const { secret: member, accountId } = await harness.newAccount('1');
    const body = { model: 'model-5.6', messages: [{ role: 'user', content: 'x' }] };
    expect((await harness.post('/v1/chat/completions', body, member)).status).toBe(200);
    await harness.store.setAccountDisabled(accountId, true);
    harness.gateway.authenticator.invalidate();
    const refused = await harness.post('/v1/chat/completions', body, member);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toBe('{"error":{"message":"Invalid token.","type":"service_api_error","code":""}}');
    await harness.store.setAccountDisabled(accountId, false);
    harness.gateway.authenticator.invalidate();
    expect((await harness.post('/v1/chat/completions', body, member)).status).toBe(200);
  });
});
