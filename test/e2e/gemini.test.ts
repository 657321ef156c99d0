/**
 * The Gemini provider through the real gateway, driven by the official `openai` client: both
 * surfaces streamed and not, a tool round trip whose call ids survive the client, reasoning effort
 * as a thinking budget, and billing from Gemini's own usage. The upstream is a real HTTP double on
 * loopback replaying Gemini wire captures.
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costOfTokens, usdToNanos } from '../../src/billing/money.js';
import { sse, startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';
import { capture, geminiBaseUrl } from '../../src/providers/gemini/__fixtures__/captures.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const GEMINI_KEY = 'AIzaSyE2eGatewayUpstreamKey0000000';
const MODEL = 'gemini-model';
const UPSTREAM_MODEL = 'gemini-2.5-flash';
const PRICES = { input: usdToNanos('1'), cached: usdToNanos('0.5'), output: usdToNanos('4') };
/** Large enough that the thinking budget is the table's, not the output cap's. */
const MAX_OUTPUT_TOKENS = 32_768;

/** What the text capture reports: prompt 1290 (1024 cached), 17 candidates + 120 thoughts. */
const TEXT_USAGE = { inputTokens: 1290, cachedInputTokens: 1024, outputTokens: 137 };
const TEXT = 'Rainy harbor in Bergen, 6°C ☔ and a light wind.';

function catalog(baseUrl: string): unknown {
  return {
    providers: [{ name: 'gemini', type: 'gemini', base_url: baseUrl, api_key_env: 'TEST_GEMINI_KEY', timeouts: { first_byte_ms: 2_000, idle_ms: 2_000 } }],
    models: [
      {
        id: MODEL,
        prices: { input: '1', cached_input: '0.5', output: '4' },
        reasoning_efforts: ['low', 'medium', 'high', 'xhigh', 'max'],
        max_output_tokens: MAX_OUTPUT_TOKENS,
        targets: [{ provider: 'gemini', model: UPSTREAM_MODEL }],
      },
    ],
    rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
  };
}

const weatherTools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'weather',
      description: 'Current weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      strict: true,
    },
  },
  {
    type: 'function',
    function: {
      name: 'local_time',
      parameters: { type: 'object', properties: { city: { type: 'string' }, format: { type: 'string', enum: ['12h', '24h'] } }, required: ['city'] },
    },
  },
];

describe.each(engines)('a Gemini upstream on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let client: OpenAI;
  let accountId: string;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(sse(capture('text-stream.sse')));
    harness = await startHarness({ engine, catalog: catalog(geminiBaseUrl(upstream)), env: { TEST_GEMINI_KEY: GEMINI_KEY } });
    const account = await harness.newAccount('5');
    accountId = account.accountId;
    client = harness.client(account.secret);
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.answer(sse(capture('text-stream.sse'), 64));
  });

  it('chat, not streamed: the answer and usage come from Gemini, the request went out in its format', async () => {
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Answer tersely.' },
        { role: 'user', content: 'Weather in Bergen?' },
      ],
    });
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0]?.message.content).toBe(TEXT);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: 1290, completion_tokens: 137, prompt_tokens_details: { cached_tokens: 1024 } });

    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe(`/v1beta/models/${UPSTREAM_MODEL}:streamGenerateContent?alt=sse`);
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toMatchObject({
      systemInstruction: { parts: [{ text: 'Answer tersely.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Weather in Bergen?' }] }],
      generationConfig: { maxOutputTokens: MAX_OUTPUT_TOKENS },
    });
  });

  it('chat, streamed: the deltas and the usage chunk', async () => {
    const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Weather?' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(TEXT);
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 1290, completion_tokens: 137 });
  });

  it('responses, not streamed', async () => {
    const response = await client.responses.create({ model: MODEL, input: 'Weather in Bergen?', instructions: 'Answer tersely.' });
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(TEXT);
    expect(response.usage).toMatchObject({ input_tokens: 1290, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 137, output_tokens_details: { reasoning_tokens: 120 } });
    expect(upstream.requests.at(-1)!.body.systemInstruction).toEqual({ parts: [{ text: 'Answer tersely.' }] });
  });

  it('responses through the SDK stream helper', async () => {
    const stream = client.responses.stream({ model: MODEL, input: 'Weather in Bergen?' });
    let deltas = '';
    stream.on('response.output_text.delta', (event) => {
      deltas += event.delta;
    });
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe(TEXT);
    expect(deltas).toBe(TEXT);
    expect(final.usage?.output_tokens).toBe(137);
  });

  it('reasoning effort becomes a thinking budget, and thoughts come back as reasoning', async () => {
    upstream.answer(sse(capture('thinking-stream.sse'), 64));
    const response = await client.responses.create({ model: MODEL, input: 'How many r in strawberry?', reasoning: { effort: 'high' } });
    expect(upstream.requests.at(-1)!.body.generationConfig).toEqual({
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      thinkingConfig: { thinkingBudget: 16_384, includeThoughts: true },
    });
    expect(response.output_text).toBe('There are **3** "r"s in strawberry.');
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(JSON.stringify(response.output[0])).toContain('Counting the letters');
    expect(response.usage).toMatchObject({ input_tokens: 9, output_tokens: 270, output_tokens_details: { reasoning_tokens: 256 } });
  });

  it('a chat tool round trip: the call ids hold, and each function response names its function', async () => {
    upstream.answer(sse(capture('parallel-tool-calls-stream.sse')));
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo and the time in Rome?' }];
    const first = await client.chat.completions.create({ model: MODEL, messages, tools: weatherTools });
    const calls = first.choices[0]?.message.tool_calls ?? [];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(calls.map((call) => (call.type === 'function' ? [call.function.name, JSON.parse(call.function.arguments)] : []))).toEqual([
      ['weather', { city: 'Oslo' }],
      ['local_time', { city: 'Rome', format: '24h' }],
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(2);
    const sentTools = upstream.requests.at(-1)!.body.tools;
    expect(sentTools).toEqual([
      {
        functionDeclarations: [
          { name: 'weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
          { name: 'local_time', parameters: { type: 'object', properties: { city: { type: 'string' }, format: { type: 'string', enum: ['12h', '24h'] } }, required: ['city'] } },
        ],
      },
    ]);

    upstream.answer(sse(capture('text-stream.sse')));
    const [weatherCall, timeCall] = calls;
    // Answered in the opposite order to the calls: the names must follow the ids, not the order.
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: timeCall!.id, content: '14:02' }, { role: 'tool', tool_call_id: weatherCall!.id, content: '-3°C, snow' });
    const second = await client.chat.completions.create({ model: MODEL, messages, tools: weatherTools });
    expect(second.choices[0]?.message.content).toBe(TEXT);

    const signature = /"thoughtSignature":"([^"]+)"/.exec(capture('parallel-tool-calls-stream.sse'))?.[1];
    const contents = upstream.requests.at(-1)!.body.contents;
    expect(contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Oslo and the time in Rome?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: signature },
          { functionCall: { name: 'local_time', args: { city: 'Rome', format: '24h' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'local_time', response: { result: '14:02' } } },
          { functionResponse: { name: 'weather', response: { result: '-3°C, snow' } } },
        ],
      },
    ]);
  });

  it('a Responses tool round trip with item input', async () => {
    upstream.answer(sse(capture('parallel-tool-calls-stream.sse')));
    const tools: OpenAI.Responses.Tool[] = weatherTools.map((tool) => ({
      type: 'function',
      name: tool.type === 'function' ? tool.function.name : '',
      parameters: tool.type === 'function' ? (tool.function.parameters ?? null) : null,
      strict: false,
    }));
    const first = await client.responses.create({ model: MODEL, input: 'Weather in Oslo and the time in Rome?', tools });
    const calls = first.output.filter((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call');
    expect(calls.map((call) => call.name)).toEqual(['weather', 'local_time']);

    upstream.answer(sse(capture('text-stream.sse')));
    const second = await client.responses.create({
      model: MODEL,
      tools,
      input: [
        { role: 'user', content: 'Weather in Oslo and the time in Rome?' },
        ...calls.map((call) => ({ type: 'function_call' as const, call_id: call.call_id, name: call.name, arguments: call.arguments })),
        { type: 'function_call_output', call_id: calls[1]!.call_id, output: '14:02' },
        { type: 'function_call_output', call_id: calls[0]!.call_id, output: '-3°C, snow' },
      ],
    });
    expect(second.output_text).toBe(TEXT);
    const lastTurn = (upstream.requests.at(-1)!.body.contents as Array<{ role: string; parts: unknown[] }>).at(-1);
    expect(lastTurn).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'local_time', response: { result: '14:02' } } },
        { functionResponse: { name: 'weather', response: { result: '-3°C, snow' } } },
      ],
    });
  });

  it("charges the ledger exactly Gemini's usage at the model's prices", async () => {
    const before = (await harness.store.listLedger(accountId)).length;
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Bill me' }] });
    expect(completion.choices[0]?.message.content).toBe(TEXT);
    const ledger = await harness.store.listLedger(accountId);
    expect(ledger).toHaveLength(before + 1);
    const charge = ledger.at(-1)!;
    expect(charge).toMatchObject({ kind: 'charge', model: MODEL, ...TEXT_USAGE });
    const expected =
      costOfTokens(TEXT_USAGE.inputTokens - TEXT_USAGE.cachedInputTokens, PRICES.input) +
      costOfTokens(TEXT_USAGE.cachedInputTokens, PRICES.cached) +
      costOfTokens(TEXT_USAGE.outputTokens, PRICES.output);
    expect(charge.amountNanos).toBe(expected);
  });
});
