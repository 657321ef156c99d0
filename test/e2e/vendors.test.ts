/**
 * The OpenAI-compatible vendors (docs/wire-protocols.md §20) through the real server and the
 * official `openai` client, against the vendor double (test/support/vendor-upstream.ts), which
 * refuses what each vendor refuses and answers with each one's differences. For every vendor: chat
 * streamed (passed through) with a `developer` message and a tool call, Responses translated onto
 * its Chat with reasoning (`reasoning_content`, `reasoning` or Mistral's thinking chunks all become the reasoning summary),
 * each request in the shape the vendor takes (its output-cap field, `stream_options` or not, its
 * reasoning setting), the reasoning as thinking for an Anthropic Messages client, and each bill equal to the usage the double reported at the catalog's prices,
 * to the nano: Groq's in `x_groq`, DeepSeek's cache hits, Mistral's on its finish chunk. Then
 * Mistral's tool-call ids round trip in its nine-character form; a release that never reports
 * usage is billed by the gateway's own count; OpenRouter's in-band error mid-stream ends the
 * answer with an error, billed by what was streamed.
 */
import { countTokens } from 'gpt-tokenizer';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { OPENAI_VENDORS, type OpenAIVendor } from '../../src/config/schema.js';
import { VENDOR_PROFILES } from '../../src/providers/openai/vendors.js';
import { settledCharges } from '../support/charges.js';
import { startHarness, type Harness } from '../support/harness.js';
import { upstreamInputTokens } from '../support/scripted-stream.js';
import { reportsReasoningCount, startVendorUpstream, VENDOR_REASONING, VENDOR_TEXT, VENDOR_USAGE, type VendorDouble } from '../support/vendor-upstream.js';

const PRICES = { input: '1', cached_input: '0.5', output: '4' };
const nanos = (tokens: number, price: string): bigint => costOfTokens(tokens, usdToNanos(price));
/** The cached input the double reports: none where the vendor's answers carry no cache count. */
const cachedOf = (vendor: OpenAIVendor): number => (['groq', 'mistral', 'vllm', 'ollama'].includes(vendor) ? 0 : VENDOR_USAGE.cached);
/** The double's usage at PRICES: 11 input (3 cached where the vendor reports its cache), 5 output. */
const costOf = (vendor: OpenAIVendor): bigint => {
  const cached = cachedOf(vendor);
  return nanos(VENDOR_USAGE.input - cached, PRICES.input) + nanos(cached, PRICES.cached_input) + nanos(VENDOR_USAGE.output, PRICES.output);
};
const LEGACY = ['vllm', 'ollama'] as const;

const tool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe('the OpenAI-compatible vendors through the official client', () => {
  let harness: Harness;
  let double: VendorDouble;

  beforeAll(async () => {
    double = await startVendorUpstream();
    const timeouts = { first_byte_ms: 3_000, idle_ms: 3_000 };
    const providers: unknown[] = OPENAI_VENDORS.map((vendor) => ({ name: `p-${vendor}`, type: 'openai', vendor, base_url: double.baseUrl(vendor), api_key_env: 'VENDOR_KEY', timeouts }));
    providers.push(...LEGACY.map((vendor) => ({ name: `p-${vendor}-legacy`, type: 'openai', vendor, base_url: double.baseUrl(vendor, true), timeouts })));
    const model = (id: string, provider: string) => ({ id, prices: PRICES, max_output_tokens: 512, reasoning_efforts: ['low', 'high'], targets: [{ provider, model: `${id}-upstream` }] });
    const models = [...OPENAI_VENDORS.map((vendor) => model(vendor, `p-${vendor}`)), ...LEGACY.map((vendor) => model(`${vendor}-legacy`, `p-${vendor}-legacy`))];
    harness = await startHarness({ catalog: { providers, models, rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 } }, env: { VENDOR_KEY: 'vendor-e2e-key-3c9d' } });
  });

  afterAll(async () => {
    await harness?.close();
    await double?.close();
  });

  const lastRequest = () => double.requests.at(-1)!;

  /** The request went as the vendor takes it: its cap field, stream_options or not, no developer role. */
  const expectVendorShape = (vendor: OpenAIVendor, cap: number): void => {
    const body = lastRequest().body;
    const profile = VENDOR_PROFILES[vendor];
    expect(body[profile.maxTokens]).toBe(cap);
    expect(body[profile.maxTokens === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens']).toBeUndefined();
    if (profile.streamOptions) expect(body.stream_options).toEqual({ include_usage: true });
    else expect(body).not.toHaveProperty('stream_options');
    expect(lastRequest().headers.authorization).toBe('Bearer vendor-e2e-key-3c9d');
  };

  it.each(OPENAI_VENDORS)('%s: chat streamed, with a developer message and a tool call, billed as reported', async (vendor) => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);

    const stream = await client.chat.completions.create({
      model: vendor,
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 100,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(VENDOR_TEXT(vendor));
    expectVendorShape(vendor, 100);
    expect((lastRequest().body.messages as Array<{ role: string }>)[0]?.role).toBe('system');
    expect(lastRequest().path).toBe(`/${vendor}/v1/chat/completions`);

    const calling = await client.chat.completions.create({ model: vendor, messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [tool], stream: true });
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    let finish: string | null | undefined;
    for await (const chunk of calling) {
      for (const fragment of chunk.choices[0]?.delta.tool_calls ?? []) {
        const seen = calls.get(fragment.index) ?? { id: '', name: '', arguments: '' };
        seen.id ||= fragment.id ?? '';
        seen.name += fragment.function?.name ?? '';
        seen.arguments += fragment.function?.arguments ?? '';
        calls.set(fragment.index, seen);
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect([...calls.values()].map((call) => ({ name: call.name, arguments: JSON.parse(call.arguments) as unknown }))).toEqual([{ name: 'get_weather', arguments: { city: 'Oslo' } }]);
    expect(finish).toBe('tool_calls');
    expectVendorShape(vendor, 512);

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => [charge.inputTokens, charge.cachedInputTokens, charge.outputTokens, charge.amountNanos])).toEqual(
      Array.from({ length: 2 }, () => [VENDOR_USAGE.input, cachedOf(vendor), VENDOR_USAGE.output, costOf(vendor)]),
    );
  });

  it.each(OPENAI_VENDORS)('%s: Responses translated onto Chat, its reasoning as the reasoning summary, billed as reported', async (vendor) => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);
    const stream = await client.responses.create({ model: vendor, input: 'Think, then say hello.', reasoning: { effort: 'high' }, stream: true, store: false });
    let summary = '';
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(summary).toBe(VENDOR_REASONING);
    expect(text).toBe(VENDOR_TEXT(vendor));
    expect(completed?.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(completed?.usage).toMatchObject({ input_tokens: VENDOR_USAGE.input, output_tokens: VENDOR_USAGE.output, output_tokens_details: { reasoning_tokens: reportsReasoningCount(vendor) ? VENDOR_USAGE.reasoning : 0 } });
    expectVendorShape(vendor, 512);
    const body = lastRequest().body;
    const effort = VENDOR_PROFILES[vendor].reasoningEffort;
    if (effort === 'reasoning_effort') expect(body.reasoning_effort).toBe('high');
    else expect(body).not.toHaveProperty('reasoning_effort');
    if (effort === 'reasoning') expect(body.reasoning).toEqual({ effort: 'high' });

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([costOf(vendor)]);
  });

  it.each(['deepseek', 'groq', 'mistral'] as const)('%s: an Anthropic Messages client gets the reasoning as a thinking block, billed as reported', async (vendor) => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const response = await harness.post(
      '/v1/messages',
      { model: vendor, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'Think, then say hello.' }] },
      null,
      { 'anthropic-version': '2023-06-01', 'x-api-key': secret },
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { content: Array<{ type: string; thinking?: string; text?: string }>; usage: { input_tokens: number; output_tokens: number } };
    expect(body.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect(body.content[0]?.thinking).toBe(VENDOR_REASONING);
    expect(body.content[1]?.text).toBe(VENDOR_TEXT(vendor));
    expect(body.usage.output_tokens).toBe(VENDOR_USAGE.output);
    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([costOf(vendor)]);
  });

  it("mistral: a tool call's id from another model goes back in Mistral's nine-character form, the same for the call and its result", async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);

    // The double refuses such an id as Mistral does, so the round trip below proves the mapping.
    const refused = await fetch(`${double.baseUrl('mistral')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'call_abc123', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'call_abc123', content: 'x' }] }),
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain('with a length of 9');

    // Mistral's own ids come back as they were.
    const calling = await client.chat.completions.create({ model: 'mistral', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [tool] });
    const own = calling.choices[0]!.message.tool_calls![0]!;
    expect(own.id).toMatch(/^[A-Za-z0-9]{9}$/);

    const foreign = 'call_Kx7aPqL0sD2mN9vB4rT1';
    const history: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: foreign, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: foreign, content: 'Snow, -4 °C' },
    ];
    const streamed = await client.chat.completions.create({ model: 'mistral', messages: history, tools: [tool], stream: true });
    let text = '';
    for await (const chunk of streamed) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('The tool said: Snow, -4 °C');
    const sent = lastRequest().body.messages as Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
    const mapped = sent[1]?.tool_calls?.[0]?.id;
    expect(mapped).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(sent[2]?.tool_call_id).toBe(mapped);

    // Through Responses (translated onto Chat), the client's call id is mapped the same way.
    const response = await client.responses.create({
      model: 'mistral',
      store: false,
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }],
      input: [
        { role: 'user', content: 'Weather in Oslo?' },
        { type: 'function_call', call_id: foreign, name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: foreign, output: 'Snow, -4 °C' },
      ],
    });
    expect(response.output_text).toBe('The tool said: Snow, -4 °C');
    const viaResponses = lastRequest().body.messages as Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
    expect(viaResponses.find((message) => message.tool_calls)?.tool_calls?.[0]?.id).toBe(mapped);
    expect(viaResponses.find((message) => message.tool_call_id)?.tool_call_id).toBe(mapped);

    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => charge.amountNanos)).toEqual([costOf('mistral'), costOf('mistral'), costOf('mistral')]);
  });

  it.each(LEGACY)('%s: a release that never reports usage is billed by the gateway own count', async (vendor) => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);
    const stream = await client.chat.completions.create({ model: `${vendor}-legacy`, messages: [{ role: 'user', content: 'Hi there, how are you today?' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(VENDOR_TEXT(vendor));
    const inputTokens = upstreamInputTokens(lastRequest());
    const outputTokens = countTokens(text);
    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => [charge.inputTokens, charge.outputTokens, charge.amountNanos])).toEqual([[inputTokens, outputTokens, nanos(inputTokens, PRICES.input) + nanos(outputTokens, PRICES.output)]]);
  });

  it("openrouter: an in-band error chunk mid-stream ends the answer with an error, billed by what was streamed", async () => {
    const start = '1';
    const { accountId, secret } = await harness.newAccount(start);
    const client = harness.client(secret);
    const stream = await client.responses.create({ model: 'openrouter', input: 'FAIL_MID_STREAM please', stream: true, store: false });
    let text = '';
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(text).toBe(VENDOR_TEXT('openrouter'));
    expect(types.at(-1)).toBe('response.failed');
    expect(types).not.toContain('response.completed');
    const inputTokens = upstreamInputTokens(lastRequest());
    const outputTokens = countTokens(text);
    const charges = await settledCharges(harness, accountId, start);
    expect(charges.map((charge) => [charge.inputTokens, charge.outputTokens, charge.amountNanos])).toEqual([[inputTokens, outputTokens, nanos(inputTokens, PRICES.input) + nanos(outputTokens, PRICES.output)]]);
  });
});
