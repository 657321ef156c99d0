/**
 * Prompt caching across translation (docs/wire-protocols.md §21), through the real server: on each
 * route, a second identical turn is read from the upstream's prompt cache and billed at the cached
 * price. The doubles (test/support/caching-upstreams.ts) cache the way their providers do: Anthropic and Bedrock only what a `cache_control` or
 * `cachePoint` covers, OpenAI and Gemini every prefix unasked. So the Anthropic and Bedrock routes
 * show the gateway sent the hint (the client's own, or its automatic breakpoints for a client whose
 * surface cannot say); every route shows the count reaches the client's own cached field and the
 * ledger charges usage × prices to the nano: fresh input at the input price, cache reads at the
 * cached-input price, cache writes at the cache-write price.
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settledCharges } from '../support/charges.js';
import { ANSWER, OUTPUT_TOKENS, startCachingBedrock, startCachingUpstream, type CacheReport, type CachingBedrock, type CachingUpstream } from '../support/caching-upstreams.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const REGION = 'eu-west-1';
const ACCESS_KEY_ID = 'AKIAE2ECACHEKEY00001';
const SECRET = 'e2e/prompt-cache/secret/5a6b7c';
const BEDROCK_CLAUDE = 'anthropic.claude-sonnet-4-20250514-v1:0';
/** USD per 1M tokens, ×1,000 nano-USD per token: input 3, cache reads 0.3, cache writes 3.75, output 15. */
const PRICES = { input: '3', cached_input: '0.3', cache_write: '3.75', output: '15' };
const START_USD = '5';

/** What a call reported, at PRICES, in nano-USD. */
function priced(report: CacheReport): bigint {
  const fresh = report.total - report.read - report.written;
  return BigInt(fresh * 3_000 + report.read * 300 + report.written * 3_750 + OUTPUT_TOKENS * 15_000);
}

/** A system prompt long enough to be cached (over 1,024 tokens), different for each route. */
function systemPrompt(route: string): string {
  return `You are the ${route} assistant. ` + 'Answer carefully, cite nothing, keep to the point. '.repeat(120);
}

function catalog(upstream: CachingUpstream, bedrock: CachingBedrock): unknown {
  const timeouts = { first_byte_ms: 3_000, idle_ms: 3_000 };
  const model = (id: string, provider: string, upstreamModel: string) => ({ id, prices: PRICES, max_output_tokens: 1_024, targets: [{ provider, model: upstreamModel }] });
  return {
    providers: [
      { name: 'claude', type: 'anthropic', base_url: upstream.baseUrl, api_key_env: 'TEST_ANTHROPIC_KEY', timeouts },
      { name: 'openai-chat', type: 'openai', api: 'chat', base_url: upstream.baseUrl, api_key_env: 'TEST_OPENAI_KEY', timeouts },
      { name: 'openai', type: 'openai', base_url: upstream.baseUrl, api_key_env: 'TEST_OPENAI_KEY', timeouts },
      { name: 'gemini', type: 'gemini', base_url: upstream.geminiBaseUrl, api_key_env: 'TEST_GEMINI_KEY', timeouts },
      { name: 'bedrock', type: 'bedrock', region: REGION, endpoint: bedrock.endpoint, credentials: { access_key_id_env: 'BEDROCK_KEY_ID', secret_access_key_env: 'BEDROCK_SECRET' }, timeouts },
    ],
    models: [
      model('claude-model', 'claude', 'claude-sonnet-4-5-20250929'),
      model('chat-model', 'openai-chat', 'gpt-4.1'),
      model('gpt-model', 'openai', 'gpt-4.1'),
      model('gemini-model', 'gemini', 'gemini-2.5-flash'),
      model('bedrock-claude', 'bedrock', BEDROCK_CLAUDE),
    ],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
  };
}

describe.each(engines)('prompt caching across translation on %s', (engine) => {
  let upstream: CachingUpstream;
  let bedrock: CachingBedrock;
  let harness: Harness;

  beforeAll(async () => {
    upstream = await startCachingUpstream();
    bedrock = await startCachingBedrock({ region: REGION, accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET });
    harness = await startHarness({
      engine,
      catalog: catalog(upstream, bedrock),
      env: { TEST_ANTHROPIC_KEY: 'sk-ant-cache', TEST_OPENAI_KEY: 'sk-openai-cache', TEST_GEMINI_KEY: 'AIzaCacheKey', BEDROCK_KEY_ID: ACCESS_KEY_ID, BEDROCK_SECRET: SECRET },
    });
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
    await bedrock?.close();
  });

  /**
   * Runs `turn` twice on a new account; checks that the first call read nothing from the cache, the
   * second read something, each client's cached count is the reported one, and each charge is the
   * report at PRICES. Returns the two reports.
   */
  async function twoTurns(reports: () => CacheReport[], turn: (secret: string) => Promise<{ cached: number; written?: number }>): Promise<[CacheReport, CacheReport]> {
    const { accountId, secret } = await harness.newAccount(START_USD);
    const seen: CacheReport[] = [];
    for (let call = 0; call < 2; call += 1) {
      const before = reports().length;
      const client = await turn(secret);
      expect(reports()).toHaveLength(before + 1);
      const report = reports().at(-1)!;
      seen.push(report);
      expect(client.cached).toBe(report.read);
      if (client.written !== undefined) expect(client.written).toBe(report.written);
    }
    const [first, second] = seen as [CacheReport, CacheReport];
    expect(first.read).toBe(0);
    expect(second.read).toBeGreaterThan(1_000);
    const charges = await settledCharges(harness, accountId, START_USD);
    expect(charges).toHaveLength(2);
    charges.forEach((charge, index) => {
      const report = seen[index]!;
      expect(charge).toMatchObject({ inputTokens: report.total, cachedInputTokens: report.read, cacheWriteInputTokens: report.written, outputTokens: OUTPUT_TOKENS });
      expect(charge.amountNanos).toBe(priced(report));
    });
    // The cached turn costs less than the first.
    expect(charges[1]!.amountNanos).toBeLessThan(charges[0]!.amountNanos);
    return [first, second];
  }

  const messages = (secret: string, body: Record<string, unknown>) =>
    harness.post('/v1/messages', { max_tokens: 512, ...body }, null, { 'x-api-key': secret, 'anthropic-version': '2023-06-01' });

  it('responses → Anthropic: the gateway places breakpoints; the second turn reads the cache, in input_tokens_details.cached_tokens', async () => {
    const system = systemPrompt('responses-anthropic');
    const [first] = await twoTurns(
      () => upstream.reports,
      async (secret) => {
        const response = await harness.client(secret).responses.create({ model: 'claude-model', instructions: system, input: 'What is prompt caching?' });
        expect(response.output_text).toBe(ANSWER);
        return { cached: response.usage?.input_tokens_details.cached_tokens ?? -1 };
      },
    );
    // The first turn wrote the prefix its breakpoints covered: the system prompt and the question.
    expect(first.written).toBe(first.total - 4);
    const sent = upstream.requests.at(-1)!.body as { system: Array<Record<string, unknown>>; messages: Array<{ content: Array<Record<string, unknown>> }> };
    expect(sent.system.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    expect(sent.messages.at(-1)?.content.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
  });

  it('chat → Anthropic, streamed: the second turn reads the cache, in prompt_tokens_details.cached_tokens', async () => {
    const system = systemPrompt('chat-anthropic');
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'lookup', description: 'Look a term up', parameters: { type: 'object', properties: { term: { type: 'string' } } } } }];
    await twoTurns(
      () => upstream.reports,
      async (secret) => {
        const stream = await harness.client(secret).chat.completions.create({
          model: 'claude-model',
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: 'What is prompt caching?' },
          ],
          tools,
          stream: true,
          stream_options: { include_usage: true },
        });
        let text = '';
        let usage: OpenAI.CompletionUsage | undefined;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? '';
          usage = chunk.usage ?? usage;
        }
        expect(text).toBe(ANSWER);
        return { cached: usage?.prompt_tokens_details?.cached_tokens ?? -1 };
      },
    );
    const sent = upstream.requests.at(-1)!.body as { tools: Array<Record<string, unknown>>; system: Array<Record<string, unknown>> };
    // The prefix's breakpoint goes after the system prompt, which follows the tools.
    expect(sent.tools[0]).not.toHaveProperty('cache_control');
    expect(sent.system.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
  });

  it('messages → Anthropic, passed through: the client\'s cache_control reaches the upstream; cache writes and reads come back and are billed at their prices', async () => {
    const system = [{ type: 'text', text: systemPrompt('messages-anthropic'), cache_control: { type: 'ephemeral', ttl: '1h' } }];
    const [first] = await twoTurns(
      () => upstream.reports,
      async (secret) => {
        const response = await messages(secret, { model: 'claude-model', system, messages: [{ role: 'user', content: 'What is prompt caching?' }] });
        expect(response.status).toBe(200);
        const body = (await response.json()) as { usage: { cache_read_input_tokens: number; cache_creation_input_tokens: number } };
        return { cached: body.usage.cache_read_input_tokens, written: body.usage.cache_creation_input_tokens };
      },
    );
    expect(first.written).toBeGreaterThan(1_000);
    expect((upstream.requests.at(-1)!.body.system as unknown[])[0]).toEqual(system[0]);
  });

  it('messages → OpenAI Chat: the upstream caches the prefix unasked; the read comes back as cache_read_input_tokens', async () => {
    await twoTurns(
      () => upstream.reports,
      async (secret) => {
        const response = await messages(secret, { model: 'chat-model', system: [{ type: 'text', text: systemPrompt('messages-chat'), cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'What is prompt caching?' }] });
        expect(response.status).toBe(200);
        const body = (await response.json()) as { content: Array<{ text: string }>; usage: { cache_read_input_tokens: number; cache_creation_input_tokens: number } };
        expect(body.content[0]?.text).toBe(ANSWER);
        return { cached: body.usage.cache_read_input_tokens, written: body.usage.cache_creation_input_tokens };
      },
    );
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    // No cache hint of Anthropic's, and no key: the client gave none.
    expect(sent.rawBody).not.toContain('cache_control');
    expect(sent.body).not.toHaveProperty('prompt_cache_key');
  });

  it('responses → OpenAI Chat: the client\'s prompt_cache_key goes on with the translated request', async () => {
    await twoTurns(
      () => upstream.reports,
      async (secret) => {
        const response = await harness.client(secret).responses.create({ model: 'chat-model', instructions: systemPrompt('responses-chat'), input: 'What is prompt caching?', prompt_cache_key: 'session-7' });
        return { cached: response.usage?.input_tokens_details.cached_tokens ?? -1 };
      },
    );
    expect(upstream.requests.at(-1)!.body.prompt_cache_key).toBe('session-7');
  });

  it('chat → OpenAI, passed through: the second turn reads the cache, in prompt_tokens_details.cached_tokens', async () => {
    await twoTurns(
      () => upstream.reports,
      async (secret) => {
        const completion = await harness.client(secret).chat.completions.create({
          model: 'gpt-model',
          messages: [
            { role: 'system', content: systemPrompt('chat-openai') },
            { role: 'user', content: 'What is prompt caching?' },
          ],
          prompt_cache_key: 'session-8',
        });
        expect(completion.choices[0]?.message.content).toBe(ANSWER);
        return { cached: completion.usage?.prompt_tokens_details?.cached_tokens ?? -1 };
      },
    );
    expect(upstream.requests.at(-1)!.body.prompt_cache_key).toBe('session-8');
  });

  it('responses → Gemini: the implicit cache\'s cachedContentTokenCount comes back as cached_tokens', async () => {
    await twoTurns(
      () => upstream.reports,
      async (secret) => {
        const response = await harness.client(secret).responses.create({ model: 'gemini-model', instructions: systemPrompt('responses-gemini'), input: 'What is prompt caching?' });
        expect(response.output_text).toBe(ANSWER);
        return { cached: response.usage?.input_tokens_details.cached_tokens ?? -1 };
      },
    );
    expect(upstream.requests.at(-1)!.path).toContain(':streamGenerateContent');
  });

  it('messages → Bedrock Converse: the client\'s cache_control becomes a cachePoint; writes and reads are billed at their prices', async () => {
    const [first] = await twoTurns(
      () => bedrock.reports,
      async (secret) => {
        const response = await messages(secret, {
          model: 'bedrock-claude',
          system: [{ type: 'text', text: systemPrompt('messages-bedrock'), cache_control: { type: 'ephemeral' } }],
          messages: [{ role: 'user', content: 'What is prompt caching?' }],
        });
        expect(response.status).toBe(200);
        const body = (await response.json()) as { usage: { cache_read_input_tokens: number; cache_creation_input_tokens: number } };
        return { cached: body.usage.cache_read_input_tokens, written: body.usage.cache_creation_input_tokens };
      },
    );
    expect(first.written).toBeGreaterThan(1_000);
    const sent = bedrock.requests.at(-1)!;
    // The client's one breakpoint, and no other: the question is not covered.
    expect(sent.system).toEqual([{ text: systemPrompt('messages-bedrock') }, { cachePoint: { type: 'default' } }]);
    expect(sent.messages).toEqual([{ role: 'user', content: [{ text: 'What is prompt caching?' }] }]);
  });

  it('chat → Bedrock Converse: the gateway places cache points for a client that cannot', async () => {
    await twoTurns(
      () => bedrock.reports,
      async (secret) => {
        const completion = await harness.client(secret).chat.completions.create({
          model: 'bedrock-claude',
          messages: [
            { role: 'system', content: systemPrompt('chat-bedrock') },
            { role: 'user', content: 'What is prompt caching?' },
          ],
        });
        return { cached: completion.usage?.prompt_tokens_details?.cached_tokens ?? -1 };
      },
    );
    const sent = bedrock.requests.at(-1)!;
    expect(sent.system).toEqual([{ text: systemPrompt('chat-bedrock') }, { cachePoint: { type: 'default' } }]);
    expect(sent.messages).toEqual([{ role: 'user', content: [{ text: 'What is prompt caching?' }, { cachePoint: { type: 'default' } }] }]);
  });
});
