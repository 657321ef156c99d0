/**
 * The anthropic provider through the real server, driven by the official `openai` client: both
 * endpoints, streamed and not, a tool round trip whose call ids survive the translation, reasoning
 * effort as extended thinking, and billing from Anthropic's own usage (cache reads priced as
 * cached input). The upstream is a real HTTP server replaying Anthropic wire captures.
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/protocol/tokens.js';
import { fixture } from '../../src/providers/anthropic/__fixtures__/fixtures.js';
import { sse, startUpstreamDouble, type ReceivedRequest, type UpstreamDouble } from '../support/upstream-double.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const UPSTREAM_SECRET = 'sk-ant-api03-e2e-upstream-secret';
const UPSTREAM_MODEL = 'claude-sonnet-4-5-20250929';
const PRICES = { input: '3', cached_input: '0.3', output: '15' };

/** What text-stream.sse reports: 14 fresh + 2048 cache reads + 312 cache writes in, 12 out. */
const TEXT = 'Oslo is snowy ❄️ and Rome is sunny.';
const TEXT_USAGE = { inputTokens: 14 + 2_048 + 312, cachedInputTokens: 2_048, outputTokens: 12 };
const OSLO_CALL = 'toolu_01T1x1fJ34qAmk2tNTrN7Up6';
const ROME_CALL = 'toolu_01CAyFxQaWdTPqzhPDxb6N3K';
const THINKING = 'The user asks for 27 * 453. Let me compute: 27 * 400 = 10800, 27 * 53 = 1431, so 12231.';

const weatherTool = {
  type: 'function' as const,
  function: { name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

interface WireMessage {
  role: string;
  content: Array<Record<string, unknown>>;
}

/** Plays Anthropic: thinking when asked to think, tool calls when given tools, text otherwise and after tool results. */
function anthropicAnswer(request: ReceivedRequest): string {
  const messages = request.body.messages as WireMessage[];
  const last = messages.at(-1);
  if (last?.content.some((block) => block.type === 'tool_result')) return fixture('text-stream.sse');
  if (request.body.thinking !== undefined) return fixture('thinking-stream.sse');
  if (request.body.tools !== undefined) return fixture('tool-use-stream.sse');
  return fixture('text-stream.sse');
}

describe.each(engines)('an Anthropic upstream through the gateway on %s', (engine) => {
  let upstream: UpstreamDouble;
  let harness: Harness;
  let client: OpenAI;
  let accountId: string;

  beforeAll(async () => {
    upstream = await startUpstreamDouble((request, response, raw) => sse(anthropicAnswer(request), 40)(request, response, raw));
    harness = await startHarness({
      engine,
      catalog: {
        providers: [{ name: 'claude', type: 'anthropic', base_url: upstream.baseUrl, api_key_env: 'TEST_ANTHROPIC_KEY', timeouts: { first_byte_ms: 2_000, idle_ms: 2_000 } }],
        models: [
          {
            id: 'claude-model',
            prices: PRICES,
            reasoning_efforts: ['low', 'medium', 'high', 'xhigh', 'max'],
            max_output_tokens: 4_096,
            targets: [{ provider: 'claude', model: UPSTREAM_MODEL }],
          },
        ],
      },
      env: { TEST_ANTHROPIC_KEY: UPSTREAM_SECRET },
    });
    const account = await harness.newAccount('20');
    accountId = account.accountId;
    client = harness.client(account.secret);
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  function lastSent(): ReceivedRequest {
    const sent = upstream.requests.at(-1);
    if (sent === undefined) throw new Error('the upstream received nothing');
    return sent;
  }

  it('chat, not streamed: the answer and usage come from Anthropic; the upstream gets a Messages request with the operator key', async () => {
    const completion = await client.chat.completions.create({
      model: 'claude-model',
      messages: [
        { role: 'system', content: 'Answer tersely.' },
        { role: 'user', content: 'Weather in Oslo and Rome?' },
      ],
    });
    expect(completion.model).toBe('claude-model');
    expect(completion.choices[0]?.message.content).toBe(TEXT);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({
      prompt_tokens: TEXT_USAGE.inputTokens,
      completion_tokens: TEXT_USAGE.outputTokens,
      total_tokens: TEXT_USAGE.inputTokens + TEXT_USAGE.outputTokens,
      prompt_tokens_details: { cached_tokens: TEXT_USAGE.cachedInputTokens },
    });

    const sent = lastSent();
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(UPSTREAM_SECRET);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      model: UPSTREAM_MODEL,
      max_tokens: 4_096,
      // The gateway's prompt-cache breakpoints: after the system prompt, on the conversation's last block.
      system: [{ type: 'text', text: 'Answer tersely.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Oslo and Rome?', cache_control: { type: 'ephemeral' } }] }],
      stream: true,
    });
  });

  it('chat, streamed with usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'claude-model',
      messages: [{ role: 'user', content: 'Weather?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(TEXT);
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: TEXT_USAGE.inputTokens, completion_tokens: TEXT_USAGE.outputTokens });
  });

  it('responses, not streamed', async () => {
    const response = await client.responses.create({ model: 'claude-model', input: 'Weather in Oslo and Rome?', instructions: 'Be brief.' });
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(TEXT);
    expect(response.usage).toMatchObject({
      input_tokens: TEXT_USAGE.inputTokens,
      input_tokens_details: { cached_tokens: TEXT_USAGE.cachedInputTokens },
      output_tokens: TEXT_USAGE.outputTokens,
    });
    expect(lastSent().body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
  });

  it('responses, streamed through the SDK helper', async () => {
    const deltas: string[] = [];
    const stream = client.responses.stream({ model: 'claude-model', input: 'Weather in Oslo and Rome?' });
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const response = await stream.finalResponse();
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(TEXT);
    expect(deltas.join('')).toBe(TEXT);
    expect(response.usage?.input_tokens).toBe(TEXT_USAGE.inputTokens);
  });

  it('a tool round trip on chat: the ids the client got back are the tool_use_ids Anthropic receives', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo and Rome?' }];
    const first = await client.chat.completions.create({ model: 'claude-model', messages, tools: [weatherTool], parallel_tool_calls: true });
    const message = first.choices[0]!.message;
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(message.content).toBe("I'll check both cities.");
    const calls = (message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call] : []));
    expect(calls.map((call) => call.id)).toEqual([OSLO_CALL, ROME_CALL]);
    expect(calls.map((call) => JSON.parse(call.function.arguments) as unknown)).toEqual([{ city: 'Oslo' }, { city: 'Rome' }]);
    // Without a system prompt, the prefix's breakpoint goes on the last tool.
    expect(lastSent().body.tools).toEqual([{ name: 'weather', description: 'Current weather', input_schema: weatherTool.function.parameters, cache_control: { type: 'ephemeral' } }]);

    messages.push(message, ...calls.map((call, index) => ({ role: 'tool' as const, tool_call_id: call.id, content: index === 0 ? '-3C, snow' : '18C, sun' })));
    const second = await client.chat.completions.create({ model: 'claude-model', messages, tools: [weatherTool] });
    expect(second.choices[0]?.message.content).toBe(TEXT);

    const sentMessages = lastSent().body.messages as WireMessage[];
    expect(sentMessages).toHaveLength(3);
    expect(sentMessages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: "I'll check both cities." },
        { type: 'tool_use', id: OSLO_CALL, name: 'weather', input: { city: 'Oslo' } },
        { type: 'tool_use', id: ROME_CALL, name: 'weather', input: { city: 'Rome' } },
      ],
    });
    expect(sentMessages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: OSLO_CALL, content: '-3C, snow' },
        { type: 'tool_result', tool_use_id: ROME_CALL, content: '18C, sun', cache_control: { type: 'ephemeral' } },
      ],
    });
  });

  it('a tool round trip on responses keeps the call ids too', async () => {
    const first = await client.responses.create({ model: 'claude-model', input: 'Weather in Oslo and Rome?', tools: [{ type: 'function', ...weatherTool.function, strict: false }] });
    const calls = first.output.flatMap((item) => (item.type === 'function_call' ? [item] : []));
    expect(calls.map((call) => call.call_id)).toEqual([OSLO_CALL, ROME_CALL]);

    const input: OpenAI.Responses.ResponseInput = [
      { role: 'user', content: 'Weather in Oslo and Rome?' },
      ...calls.map((call) => ({ type: 'function_call' as const, call_id: call.call_id, name: call.name, arguments: call.arguments })),
      ...calls.map((call) => ({ type: 'function_call_output' as const, call_id: call.call_id, output: 'mild' })),
    ];
    const second = await client.responses.create({ model: 'claude-model', input, tools: [{ type: 'function', ...weatherTool.function, strict: false }] });
    expect(second.output_text).toBe(TEXT);
    const sentMessages = lastSent().body.messages as WireMessage[];
    expect(sentMessages.at(-1)?.content.map((block) => block.tool_use_id)).toEqual([OSLO_CALL, ROME_CALL]);
  });

  it('reasoning effort becomes extended thinking; the thinking comes back as reasoning', async () => {
    const response = await client.responses.create({ model: 'claude-model', input: 'What is 27 * 453?', reasoning: { effort: 'low' }, temperature: 0.2 });
    const sent = lastSent();
    expect(sent.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2_048 });
    expect(sent.body.max_tokens).toBe(4_096);
    expect(sent.body).not.toHaveProperty('temperature');

    expect(response.output_text).toBe('27 × 453 = 12,231.');
    const reasoning = response.output.find((item) => item.type === 'reasoning');
    expect(reasoning?.type === 'reasoning' ? reasoning.summary.map((part) => part.text).join('') : '').toBe(THINKING);
    expect(response.usage).toMatchObject({ input_tokens: 36, output_tokens: 58, output_tokens_details: { reasoning_tokens: countTextTokens(THINKING) } });
  });

  it('the ledger charges Anthropic\'s usage, cache reads at the cached-input price', async () => {
    const before = (await harness.store.listLedger(accountId)).length;
    await client.chat.completions.create({ model: 'claude-model', messages: [{ role: 'user', content: 'Weather?' }] });
    const ledger = await harness.store.listLedger(accountId);
    expect(ledger).toHaveLength(before + 1);
    const charge = ledger.at(-1);
    expect(charge).toMatchObject({ kind: 'charge', model: 'claude-model', ...TEXT_USAGE });
    // USD per 1M tokens → nano-USD per token: ×1,000. Fresh input (incl. cache writes) 3, cache reads 0.3, output 15.
    const fresh = TEXT_USAGE.inputTokens - TEXT_USAGE.cachedInputTokens;
    expect(charge?.amountNanos).toBe(BigInt(fresh * 3_000 + TEXT_USAGE.cachedInputTokens * 300 + TEXT_USAGE.outputTokens * 15_000));
  });
});
