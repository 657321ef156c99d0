/**
 * The `openai` provider type through the real server and the official `openai` client: both
 * endpoints, streamed and not, and tool round trips, for each of the provider's `api` settings.
 * `chat` serves Responses clients by translating them to Chat; `responses` serves Chat clients by
 * translating them to Responses; `both` passes each through. The double speaks both wire formats,
 * so every case also checks what reached it (path, model, forced usage, our key) and that the
 * bill is the usage it reported.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startOpenAIUpstream, type UpstreamDouble, type UpstreamReply } from '../support/openai-upstream.js';
import { textOf, weatherTool } from '../support/weather-tool.js';

const UPSTREAM_SECRET = 'sk-upstream-operator-key';
const CHAT_PATH = '/v1/chat/completions';
const RESPONSES_PATH = '/v1/responses';
const GREETING = 'Hello from upstream';
/** The double's usage: 11 input (3 of them cached), 5 output. */
const REPORTED = { inputTokens: 11, cachedInputTokens: 3, outputTokens: 5 };
/** At the test prices (input 1, cached 0.5, output 4 USD per 1M): 8 + 1.5 + 20 = 29.5 µUSD. */
const REPORTED_COST_NANOS = 29_500n;

const chatTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};

/** The last conversation entry of a Chat or Responses body. */
function lastEntry(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const entries = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : [];
  return entries.at(-1) as Record<string, unknown> | undefined;
}

/**
 * Quotes the tool output when the last entry is a tool result; otherwise calls the tool when tools
 * are offered (a fresh call id per request, so the next turn can be matched to it); else greets.
 */
function toolOrQuote(body: Record<string, unknown>, index: number): UpstreamReply {
  const last = lastEntry(body);
  if (last?.role === 'tool') return { content: `The tool said: ${textOf(last.content)}` };
  if (last?.type === 'function_call_output') return { content: `The tool said: ${textOf(last.output)}` };
  if (Array.isArray(body.tools) && body.tools.length > 0) return { toolCalls: [{ id: `call_up_${index}`, name: 'get_weather', arguments: '{"city":"Bergen"}' }] };
  return { content: GREETING };
}

/** The tool names the upstream was offered, in either wire format's shape. */
function offeredToolNames(body: Record<string, unknown>): string[] {
  const tools = (body.tools ?? []) as Array<{ name?: string; function?: { name?: string } }>;
  return tools.map((tool) => tool.function?.name ?? tool.name ?? '');
}

/** The call ids a Chat or Responses body answers with tool results. */
function answeredCallIds(body: Record<string, unknown>): string[] {
  if (Array.isArray(body.messages)) {
    return (body.messages as Array<{ role?: string; tool_call_id?: string }>).filter((message) => message.role === 'tool').map((message) => message.tool_call_id ?? '');
  }
  return ((body.input ?? []) as Array<{ type?: string; call_id?: string }>).filter((item) => item.type === 'function_call_output').map((item) => item.call_id ?? '');
}

/** The call ids of the earlier tool calls a Chat or Responses body replays. */
function replayedCallIds(body: Record<string, unknown>): string[] {
  if (Array.isArray(body.messages)) {
    return (body.messages as Array<{ tool_calls?: Array<{ id: string }> }>).flatMap((message) => (message.tool_calls ?? []).map((call) => call.id));
  }
  return ((body.input ?? []) as Array<{ type?: string; call_id?: string }>).filter((item) => item.type === 'function_call').map((item) => item.call_id ?? '');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const configs = [
  { api: 'chat', chatPath: CHAT_PATH, responsesPath: CHAT_PATH },
  { api: 'responses', chatPath: RESPONSES_PATH, responsesPath: RESPONSES_PATH },
  { api: 'both', chatPath: CHAT_PATH, responsesPath: RESPONSES_PATH },
] as const;

function catalogFor(upstreamBaseUrl: string): unknown {
  return {
    providers: configs.map(({ api }) => ({
      name: `openai-${api}`,
      type: 'openai',
      api,
      base_url: upstreamBaseUrl,
      api_key_env: 'TEST_UPSTREAM_KEY',
      timeouts: { first_byte_ms: 2000, idle_ms: 2000 },
    })),
    models: configs.map(({ api }) => ({
      id: `via-${api}`,
      prices: { input: '1', cached_input: '0.5', output: '4' },
      max_output_tokens: 512,
      targets: [{ provider: `openai-${api}`, model: `upstream-${api}` }],
    })),
  };
}

describe.each(engines)('the openai provider through the official client on %s', (engine) => {
  let harness: Harness;
  let upstream: UpstreamDouble;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ reply: toolOrQuote });
    harness = await startHarness({ engine, catalog: catalogFor(upstream.baseUrl), env: { TEST_UPSTREAM_KEY: UPSTREAM_SECRET } });
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  describe.each(configs)('api: $api', ({ api, chatPath, responsesPath }) => {
    const model = `via-${api}`;
    let client: OpenAI;
    let secret: string;
    let accountId: string;

    beforeAll(async () => {
      ({ secret, accountId } = await harness.newAccount('5'));
      client = harness.client(secret);
    });

    /** Runs `act`, then returns the requests the double received meanwhile, each checked for what every upstream call must carry. */
    async function upstreamCallsOf(act: () => Promise<void>, path: string): Promise<Array<Record<string, unknown>>> {
      const first = upstream.requests.length;
      await act();
      const sent = upstream.requests.slice(first);
      expect(sent.length).toBeGreaterThan(0);
      for (const request of sent) {
        expect(request.path).toBe(path);
        expect(request.body.model).toBe(`upstream-${api}`);
        expect(request.headers.authorization).toBe(`Bearer ${UPSTREAM_SECRET}`);
        expect(JSON.stringify(request.headers)).not.toContain(secret);
        // Usage is how a call is billed: a Chat stream always asks for it.
        if (path === CHAT_PATH && request.body.stream === true) expect(request.body.stream_options).toMatchObject({ include_usage: true });
      }
      return sent.map((request) => request.body);
    }

    /** The one charge `act` added to the ledger, once its hold is settled (streams settle after their last byte). */
    async function chargeOf(act: () => Promise<void>) {
      const before = (await harness.store.listLedger(accountId)).length;
      await act();
      const deadline = Date.now() + 5000;
      while ((await harness.store.countOpenHolds(accountId)) > 0 && Date.now() < deadline) await sleep(10);
      const added = (await harness.store.listLedger(accountId)).slice(before);
      expect(added).toHaveLength(1);
      return added[0]!;
    }

    function expectChargedAsReported(charge: Awaited<ReturnType<typeof chargeOf>>): void {
      expect(charge).toMatchObject({ kind: 'charge', model, ...REPORTED, amountNanos: REPORTED_COST_NANOS });
    }

    it('chat, not streamed', async () => {
      let completion: OpenAI.ChatCompletion | undefined;
      const sent = await upstreamCallsOf(async () => {
        const charge = await chargeOf(async () => {
          completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });
        });
        expectChargedAsReported(charge);
      }, chatPath);
      expect(sent).toHaveLength(1);
      expect(completion?.object).toBe('chat.completion');
      expect(completion?.choices[0]?.message.content).toBe(GREETING);
      expect(completion?.choices[0]?.finish_reason).toBe('stop');
      expect(completion?.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 });
    });

    it('chat, streamed with usage', async () => {
      let text = '';
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined;
      await upstreamCallsOf(async () => {
        const charge = await chargeOf(async () => {
          const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
          for await (const chunk of stream) {
            text += chunk.choices[0]?.delta.content ?? '';
            finish = chunk.choices[0]?.finish_reason ?? finish;
            if (chunk.usage) usage = chunk.usage;
          }
        });
        expectChargedAsReported(charge);
      }, chatPath);
      expect(text).toBe(GREETING);
      expect(finish).toBe('stop');
      expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 3 } });
    });

    it('chat, streamed without stream_options: usage is still asked for upstream and billed, never shown', async () => {
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      const sent = await upstreamCallsOf(async () => {
        const charge = await chargeOf(async () => {
          const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true });
          for await (const chunk of stream) chunks.push(chunk);
        });
        expectChargedAsReported(charge);
      }, chatPath);
      if (chatPath === CHAT_PATH) expect(sent[0]?.stream_options).toMatchObject({ include_usage: true });
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(GREETING);
      expect(chunks.every((chunk) => chunk.usage === undefined || chunk.usage === null)).toBe(true);
    });

    it.each([false, true])('chat tool round trip (first turn streamed: %s): the call id the client got is the one the upstream gets back', async (streamed) => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Bergen?' }];
      let assistant: OpenAI.ChatCompletionMessageParam | undefined;
      let callId = '';
      let finish: string | null | undefined;
      const [firstTurn] = await upstreamCallsOf(async () => {
        if (streamed) {
          const completion = await client.chat.completions.stream({ model, messages, tools: [chatTool] }).finalChatCompletion();
          assistant = completion.choices[0]!.message;
          finish = completion.choices[0]?.finish_reason;
        } else {
          const completion = await client.chat.completions.create({ model, messages, tools: [chatTool] });
          assistant = completion.choices[0]!.message;
          finish = completion.choices[0]?.finish_reason;
        }
      }, chatPath);
      expect(offeredToolNames(firstTurn!)).toEqual(['get_weather']);
      expect(finish).toBe('tool_calls');
      const call = (assistant as OpenAI.ChatCompletionAssistantMessageParam).tool_calls?.[0];
      if (call?.type !== 'function') throw new Error('expected a function call');
      expect(call.function).toMatchObject({ name: 'get_weather', arguments: '{"city":"Bergen"}' });
      callId = call.id;
      // The upstream's own id reaches the client unchanged, whichever wire format carried it.
      expect(callId).toMatch(/^call_up_\d+$/);

      messages.push(assistant!, { role: 'tool', tool_call_id: callId, content: '6C and rain' });
      let answer: OpenAI.ChatCompletion | undefined;
      const [secondTurn] = await upstreamCallsOf(async () => {
        answer = await client.chat.completions.create({ model, messages, tools: [chatTool] });
      }, chatPath);
      expect(replayedCallIds(secondTurn!)).toEqual([callId]);
      expect(answeredCallIds(secondTurn!)).toEqual([callId]);
      expect(answer?.choices[0]?.message.content).toBe('The tool said: 6C and rain');
      expect(answer?.choices[0]?.finish_reason).toBe('stop');
    });

    it('responses, not streamed', async () => {
      let response: OpenAI.Responses.Response | undefined;
      const sent = await upstreamCallsOf(async () => {
        const charge = await chargeOf(async () => {
          response = await client.responses.create({ model, input: 'Hi' });
        });
        expectChargedAsReported(charge);
      }, responsesPath);
      expect(sent).toHaveLength(1);
      expect(response?.object).toBe('response');
      expect(response?.status).toBe('completed');
      expect(response?.output_text).toBe(GREETING);
      expect(response?.usage).toMatchObject({ input_tokens: 11, output_tokens: 5, input_tokens_details: { cached_tokens: 3 } });
    });

    it('responses through the stream helper', async () => {
      const types: string[] = [];
      let deltas = '';
      let final: OpenAI.Responses.Response | undefined;
      await upstreamCallsOf(async () => {
        const charge = await chargeOf(async () => {
          const stream = client.responses.stream({ model, input: 'Hi' });
          for await (const event of stream) {
            types.push(event.type);
            if (event.type === 'response.output_text.delta') deltas += event.delta;
          }
          final = await stream.finalResponse();
        });
        expectChargedAsReported(charge);
      }, responsesPath);
      expect(final?.status).toBe('completed');
      expect(final?.output_text).toBe(GREETING);
      expect(deltas).toBe(GREETING);
      expect(types[0]).toBe('response.created');
      expect(types.at(-1)).toBe('response.completed');
      expect(types).toEqual(expect.arrayContaining(['response.output_item.added', 'response.content_part.added', 'response.output_text.done', 'response.output_item.done']));
      expect(final?.usage).toMatchObject({ input_tokens: 11, output_tokens: 5 });
    });

    it.each([false, true])('responses tool round trip (first turn streamed: %s): the call_id the client got is the one the upstream gets back', async (streamed) => {
      const question: OpenAI.Responses.ResponseInputItem = { role: 'user', content: 'Weather in Bergen?' };
      let first: OpenAI.Responses.Response | undefined;
      const [firstTurn] = await upstreamCallsOf(async () => {
        first = streamed
          ? await client.responses.stream({ model, input: [question], tools: [weatherTool] }).finalResponse()
          : await client.responses.create({ model, input: [question], tools: [weatherTool] });
      }, responsesPath);
      expect(offeredToolNames(firstTurn!)).toEqual(['get_weather']);
      const call = first?.output.find((item) => item.type === 'function_call');
      if (call?.type !== 'function_call') throw new Error('expected a function call');
      expect(call).toMatchObject({ name: 'get_weather', arguments: '{"city":"Bergen"}' });
      expect(call.call_id).toMatch(/^call_up_\d+$/);

      let second: OpenAI.Responses.Response | undefined;
      const [secondTurn] = await upstreamCallsOf(async () => {
        second = await client.responses.create({
          model,
          // The call item goes back as the client received it (with its id and status).
          input: [question, call, { type: 'function_call_output', call_id: call.call_id, output: '17C and sun' }],
          tools: [weatherTool],
        });
      }, responsesPath);
      expect(replayedCallIds(secondTurn!)).toEqual([call.call_id]);
      expect(answeredCallIds(secondTurn!)).toEqual([call.call_id]);
      expect(second?.output_text).toBe('The tool said: 17C and sun');
      expect(second?.status).toBe('completed');
    });
  });
});
