import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { REASONING_EFFORTS, type CanonicalEvent, type CanonicalRequest, type FunctionTool, type InputItem } from '../../protocol/canonical.js';
import type { SimulatedProviderConfig } from '../../config/schema.js';
import { UpstreamError, type ProviderCall } from '../provider.js';
import { REASONING_TOKENS } from './answer-plan.js';
import { createSimulatedProvider } from './simulated-provider.js';

function config(overrides: Partial<SimulatedProviderConfig> = {}): SimulatedProviderConfig {
  return {
    name: 'simulated',
    type: 'simulated',
    pace_ms: 0,
    failure: { mode: 'none', after_chunks: 2 },
    timeouts: { connect_ms: 5_000, first_byte_ms: 60_000, idle_ms: 60_000 },
    ...overrides,
  };
}

function userMessage(text: string): InputItem {
  return { type: 'message', role: 'user', content: [{ type: 'text', text }] };
}

function request(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: 'model-5.6',
    input: [userMessage('What is the weather like in Paris today, and should I bring an umbrella with me?')],
    tools: [],
    toolChoice: 'auto',
    stream: true,
    ...overrides,
  };
}

function call(overrides: Partial<ProviderCall> = {}): ProviderCall {
  return { upstreamModel: 'upstream-model-x', maxOutputTokens: 4_096, signal: new AbortController().signal, requestId: 'req_test', ...overrides };
}

async function collect(source: AsyncIterable<CanonicalEvent>): Promise<CanonicalEvent[]> {
  const events: CanonicalEvent[] = [];
  for await (const event of source) events.push(event);
  return events;
}

function textOf(events: CanonicalEvent[], type: 'text-delta' | 'reasoning-delta' = 'text-delta'): string {
  return events.map((event) => (event.type === type ? event.delta : '')).join('');
}

function argumentsOf(events: CanonicalEvent[], index: number): string {
  return events.map((event) => (event.type === 'tool-call-delta' && event.index === index ? event.delta : '')).join('');
}

function usageOf(events: CanonicalEvent[]) {
  const usage = events.find((event) => event.type === 'usage');
  if (usage?.type !== 'usage') throw new Error('no usage event');
  return usage.usage;
}

function finishOf(events: CanonicalEvent[]): string | undefined {
  const finish = events.at(-1);
  return finish?.type === 'finish' ? finish.reason : undefined;
}

const weatherTool: FunctionTool = {
  name: 'get_weather',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer' },
      detailed: { type: 'boolean' },
      options: { type: 'object', properties: { hourly: { type: 'boolean' }, note: { type: 'string' } }, required: ['hourly'] },
    },
    required: ['city', 'unit'],
  },
};
const timeTool: FunctionTool = { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] } };

const provider = createSimulatedProvider(config());

describe('simulated provider: text answers', () => {
  it('starts with response-start naming the upstream model and ends with usage then finish', async () => {
    const events = await collect(provider.stream(request(), call()));
    expect(events[0]).toEqual({ type: 'response-start', upstreamModel: 'upstream-model-x' });
    expect(events.at(-2)?.type).toBe('usage');
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(events.slice(1, -2).every((event) => event.type === 'text-delta')).toBe(true);
    expect(events.filter((event) => event.type === 'text-delta').length).toBeGreaterThan(3);
  });

  it('is deterministic and derives its text from the input', async () => {
    const first = await collect(provider.stream(request(), call()));
    const second = await collect(provider.stream(request(), call()));
    expect(second).toEqual(first);
    const text = textOf(first);
    expect(text.startsWith('Simulated answer from upstream-model-x to "What is the weather like in Paris today, and should I bring...". ')).toBe(true);
    const other = await collect(provider.stream(request({ input: [userMessage('Tell me a story about a lighthouse keeper.')] }), call()));
    expect(textOf(other)).toContain('"Tell me a story about a lighthouse keeper."');
    expect(textOf(other)).not.toEqual(text);
  });

  it('reports output tokens equal to the tokenizer count of the streamed text', async () => {
    const inputs = ['Hi', 'Répondez en français, s’il vous plaît 🦄 日本語のテキスト', 'a <|endoftext|> b'];
    for (const input of inputs) {
      const events = await collect(provider.stream(request({ input: [userMessage(input)] }), call()));
      const usage = usageOf(events);
      const text = textOf(events);
      expect(usage.outputTokens).toBe(countTokens(text, { disallowedSpecial: new Set() }));
      expect(usage.outputTokens).toBeGreaterThan(15);
      expect(usage.outputTokens).toBeLessThan(120);
      expect(usage.reasoningTokens).toBe(0);
      expect(usage.cachedInputTokens).toBe(0);
    }
  });

  it('bills input exactly as the gateway estimates it: 4 framing tokens per item and 3 for the reply', async () => {
    const instructions = 'You are terse.';
    const input: InputItem[] = [
      { type: 'message', role: 'developer', content: [{ type: 'text', text: 'Prefer metric units.' }] },
      userMessage('How far is the moon?'),
      { type: 'function_call', callId: 'call_1', name: 'lookup', arguments: '{"q":"moon"}' },
      { type: 'function_call_output', callId: 'call_1', output: '384400 km' },
    ];
    const events = await collect(provider.stream(request({ instructions, input }), call()));
    const expected =
      3 +
      (4 + countTokens(instructions)) +
      (4 + countTokens('Prefer metric units.')) +
      (4 + countTokens('How far is the moon?')) +
      (4 + countTokens('lookup') + countTokens('{"q":"moon"}')) +
      (4 + countTokens('384400 km'));
    expect(usageOf(events).inputTokens).toBe(expected);
  });

  it('answers tool outputs that end the input by quoting them, even when tools are offered', async () => {
    const input: InputItem[] = [
      userMessage('Weather in Paris?'),
      { type: 'function_call', callId: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', callId: 'call_b', name: 'get_time', arguments: '{"zone":"CET"}' },
      { type: 'function_call_output', callId: 'call_a', output: '18 degrees and cloudy' },
      { type: 'function_call_output', callId: 'call_b', output: '14:05' },
    ];
    const events = await collect(provider.stream(request({ input, tools: [weatherTool, timeTool] }), call()));
    expect(textOf(events)).toBe('The tool returned: 18 degrees and cloudy. The tool returned: 14:05.');
    expect(events.some((event) => event.type === 'tool-call-start')).toBe(false);
    expect(finishOf(events)).toBe('stop');
  });

  it('answers with JSON of the requested schema when a json_schema response format is set', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } }, required: ['city', 'population'] };
    const events = await collect(provider.stream(request({ responseFormat: { type: 'json_schema', name: 'city', schema } }), call()));
    const parsed: unknown = JSON.parse(textOf(events));
    expect(parsed).toEqual({ city: 'What is the', population: 1 });
    expect(usageOf(events).outputTokens).toBe(countTokens(textOf(events)));
  });

  it('cuts the text at maxOutputTokens and finishes with length', async () => {
    const events = await collect(provider.stream(request(), call({ maxOutputTokens: 7 })));
    const text = textOf(events);
    const full = textOf(await collect(provider.stream(request(), call())));
    expect(full.startsWith(text)).toBe(true);
    expect(text.length).toBeLessThan(full.length);
    expect(countTokens(text)).toBe(usageOf(events).outputTokens);
    expect(usageOf(events).outputTokens).toBeLessThanOrEqual(7);
    expect(usageOf(events).outputTokens).toBeGreaterThan(4);
    expect(finishOf(events)).toBe('length');
  });

  it('streams nothing visible with a zero output budget and finishes with length', async () => {
    const events = await collect(provider.stream(request(), call({ maxOutputTokens: 0 })));
    expect(events.map((event) => event.type)).toEqual(['response-start', 'usage', 'finish']);
    expect(usageOf(events).outputTokens).toBe(0);
    expect(finishOf(events)).toBe('length');
  });
});

describe('simulated provider: reasoning', () => {
  it('streams a reasoning summary first and bills the effort’s reasoning tokens', async () => {
    for (const effort of ['minimal', ...REASONING_EFFORTS] as const) {
      const events = await collect(provider.stream(request({ reasoningEffort: effort }), call({ maxOutputTokens: 10_000 })));
      const firstDelta = events.findIndex((event) => event.type === 'text-delta');
      const lastReasoning = events.findLastIndex((event) => event.type === 'reasoning-delta');
      expect(lastReasoning).toBeGreaterThan(0);
      expect(lastReasoning).toBeLessThan(firstDelta);
      expect(textOf(events, 'reasoning-delta')).toContain(`with ${effort} effort`);
      const usage = usageOf(events);
      expect(usage.reasoningTokens).toBe(REASONING_TOKENS[effort]);
      expect(usage.outputTokens).toBe(REASONING_TOKENS[effort] + countTokens(textOf(events)));
      expect(finishOf(events)).toBe('stop');
    }
    expect(Object.values(REASONING_TOKENS)).toEqual([0, 8, 32, 128, 512, 1024, 2048]);
  });

  it("thinks not at all at OpenAI's effort none", async () => {
    const events = await collect(provider.stream(request({ reasoningEffort: 'none' }), call({ maxOutputTokens: 10_000 })));
    expect(events.some((event) => event.type === 'reasoning-delta')).toBe(false);
    expect(usageOf(events).reasoningTokens).toBe(0);
  });

  it('caps reasoning and text together at maxOutputTokens', async () => {
    const partly = await collect(provider.stream(request({ reasoningEffort: 'low' }), call({ maxOutputTokens: 40 })));
    expect(usageOf(partly).reasoningTokens).toBe(32);
    expect(usageOf(partly).outputTokens).toBeLessThanOrEqual(40);
    expect(usageOf(partly).outputTokens).toBe(32 + countTokens(textOf(partly)));
    expect(countTokens(textOf(partly))).toBeGreaterThan(0);
    expect(finishOf(partly)).toBe('length');

    const exhausted = await collect(provider.stream(request({ reasoningEffort: 'max' }), call({ maxOutputTokens: 100 })));
    expect(usageOf(exhausted)).toMatchObject({ reasoningTokens: 100, outputTokens: 100 });
    expect(textOf(exhausted)).toBe('');
    expect(finishOf(exhausted)).toBe('length');
  });
});

describe('simulated provider: tool calls', () => {
  it('calls the only tool with arguments generated from its schema, in 2–3 pieces', async () => {
    const events = await collect(provider.stream(request({ tools: [weatherTool] }), call()));
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('response-start');
    expect(types[1]).toBe('tool-call-start');
    expect(types.slice(-3)).toEqual(['tool-call-end', 'usage', 'finish']);
    const start = events[1];
    expect(start?.type === 'tool-call-start' && start.name).toBe('get_weather');
    expect(start?.type === 'tool-call-start' && start.callId).toMatch(/^call_[A-Za-z0-9]{24}$/);
    const pieces = events.filter((event) => event.type === 'tool-call-delta');
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    expect(pieces.length).toBeLessThanOrEqual(3);
    const callArguments = argumentsOf(events, 0);
    expect(JSON.parse(callArguments)).toEqual({
      city: 'What is the',
      unit: 'celsius',
      days: 1,
      detailed: true,
      options: { hourly: true },
    });
    expect(usageOf(events).outputTokens).toBe(countTokens(callArguments));
    expect(finishOf(events)).toBe('tool_calls');
    expect(events.some((event) => event.type === 'text-delta')).toBe(false);
  });

  it('makes two parallel calls with deterministic, distinct call ids', async () => {
    const events = await collect(provider.stream(request({ tools: [weatherTool, timeTool, { name: 'unused' }] }), call()));
    const starts = events.filter((event) => event.type === 'tool-call-start');
    expect(starts.map((event) => [event.index, event.name])).toEqual([
      [0, 'get_weather'],
      [1, 'get_time'],
    ]);
    expect(new Set(starts.map((event) => event.callId)).size).toBe(2);
    expect(JSON.parse(argumentsOf(events, 1))).toEqual({ zone: 'What is the' });
    expect(usageOf(events).outputTokens).toBe(countTokens(argumentsOf(events, 0)) + countTokens(argumentsOf(events, 1)));
    expect(finishOf(events)).toBe('tool_calls');
    const again = await collect(provider.stream(request({ tools: [weatherTool, timeTool, { name: 'unused' }] }), call()));
    expect(again).toEqual(events);
  });

  it('makes one call when parallel calls are off, and the named one for a named choice', async () => {
    const single = await collect(provider.stream(request({ tools: [weatherTool, timeTool], parallelToolCalls: false, toolChoice: 'required' }), call()));
    expect(single.filter((event) => event.type === 'tool-call-start').map((event) => event.type === 'tool-call-start' && event.name)).toEqual(['get_weather']);

    const named = await collect(provider.stream(request({ tools: [weatherTool, timeTool], toolChoice: { name: 'get_time' } }), call()));
    const starts = named.filter((event) => event.type === 'tool-call-start');
    expect(starts.map((event) => [event.index, event.name])).toEqual([[0, 'get_time']]);
  });

  it('answers in text when toolChoice is none', async () => {
    const events = await collect(provider.stream(request({ tools: [weatherTool], toolChoice: 'none' }), call()));
    expect(events.some((event) => event.type.startsWith('tool-call'))).toBe(false);
    expect(textOf(events)).toMatch(/^Simulated answer/);
    expect(finishOf(events)).toBe('stop');
  });

  it('gives a tool without parameters the arguments {}', async () => {
    const events = await collect(provider.stream(request({ tools: [{ name: 'ping' }] }), call()));
    expect(argumentsOf(events, 0)).toBe('{}');
  });

  it('refuses a named tool choice that is not among the tools with a 400 before response-start', async () => {
    const stream = provider.stream(request({ tools: [weatherTool], toolChoice: { name: 'missing' } }), call());
    const error = await collect(stream).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'status', status: 400, clientMessage: "Tool choice 'missing' not found in 'tools' parameter." });
    expect((error as UpstreamError).failoverable).toBe(false);
  });

  it('cuts tool arguments at maxOutputTokens, closes the call and finishes with length', async () => {
    const events = await collect(provider.stream(request({ tools: [weatherTool, timeTool] }), call({ maxOutputTokens: 5 })));
    expect(events.filter((event) => event.type === 'tool-call-start')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'tool-call-end')).toHaveLength(1);
    const callArguments = argumentsOf(events, 0);
    expect(() => JSON.parse(callArguments) as unknown).toThrow();
    expect(usageOf(events).outputTokens).toBe(countTokens(callArguments));
    expect(usageOf(events).outputTokens).toBeLessThanOrEqual(5);
    expect(finishOf(events)).toBe('length');
  });
});

describe('simulated provider: pacing and aborts', () => {
  it('stops at once when the signal aborts during a pause, with fewer events than the full answer', async () => {
    const full = await collect(provider.stream(request(), call()));
    const controller = new AbortController();
    // A pause this long would time the test out unless the abort ends it.
    const paced = createSimulatedProvider(config({ pace_ms: 60_000 }));
    const events: CanonicalEvent[] = [];
    setTimeout(() => controller.abort(), 20);
    for await (const event of paced.stream(request(), call({ signal: controller.signal }))) events.push(event);
    expect(events).toEqual([{ type: 'response-start', upstreamModel: 'upstream-model-x' }]);
    expect(events.length).toBeLessThan(full.length);
  });

  it('yields no further event once the consumer aborts between chunks', async () => {
    const controller = new AbortController();
    const paced = createSimulatedProvider(config({ pace_ms: 1 }));
    const events: CanonicalEvent[] = [];
    for await (const event of paced.stream(request(), call({ signal: controller.signal }))) {
      events.push(event);
      if (events.length === 3) controller.abort();
    }
    expect(events).toHaveLength(3);
  });

  it('yields nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await collect(provider.stream(request(), call({ signal: controller.signal })))).toEqual([]);
  });

  it('ends cleanly when the consumer breaks out of the iteration', async () => {
    const iterator = provider.stream(request(), call())[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ type: 'response-start' });
    expect((await iterator.next()).value).toMatchObject({ type: 'text-delta' });
    expect(await iterator.return?.()).toEqual({ done: true, value: undefined });
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });
});

describe('simulated provider: failures', () => {
  it('before_first_byte throws a failoverable 500 before any event', async () => {
    const failing = createSimulatedProvider(config({ failure: { mode: 'before_first_byte', after_chunks: 2 } }));
    const events: CanonicalEvent[] = [];
    const error = await (async () => {
      for await (const event of failing.stream(request(), call())) events.push(event);
    })().catch((caught: unknown) => caught);
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'status', status: 500, message: 'simulated upstream failure' });
    expect((error as UpstreamError).failoverable).toBe(true);
  });

  it('mid_stream yields an error event after after_chunks text chunks, then ends', async () => {
    const failing = createSimulatedProvider(config({ failure: { mode: 'mid_stream', after_chunks: 2 } }));
    const events = await collect(failing.stream(request(), call()));
    expect(events.map((event) => event.type)).toEqual(['response-start', 'text-delta', 'text-delta', 'error']);
    expect(events.at(-1)).toEqual({ type: 'error', code: 'server_error', message: 'simulated upstream failure mid-stream' });
  });

  it('mid_stream counts answer chunks, not reasoning, and fails even a short tool call', async () => {
    const afterZero = createSimulatedProvider(config({ failure: { mode: 'mid_stream', after_chunks: 0 } }));
    const reasoning = await collect(afterZero.stream(request({ reasoningEffort: 'low' }), call()));
    expect(reasoning.filter((event) => event.type === 'reasoning-delta').length).toBeGreaterThan(0);
    expect(reasoning.filter((event) => event.type === 'text-delta')).toHaveLength(0);
    expect(reasoning.at(-1)?.type).toBe('error');

    const afterMany = createSimulatedProvider(config({ failure: { mode: 'mid_stream', after_chunks: 50 } }));
    const tool = await collect(afterMany.stream(request({ tools: [{ name: 'ping' }] }), call()));
    expect(tool.map((event) => event.type)).toEqual(['response-start', 'tool-call-start', 'tool-call-delta', 'tool-call-end', 'error']);
  });

  it('hang yields nothing and throws a timeout when the call is aborted', async () => {
    const hanging = createSimulatedProvider(config({ failure: { mode: 'hang', after_chunks: 2 } }));
    const controller = new AbortController();
    const events: CanonicalEvent[] = [];
    setTimeout(() => controller.abort(), 20);
    const error = await (async () => {
      for await (const event of hanging.stream(request(), call({ signal: controller.signal }))) events.push(event);
    })().catch((caught: unknown) => caught);
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'timeout', message: 'simulated upstream was silent until the call was aborted' });
  });

  it('hang throws a timeout after timeouts.first_byte_ms when nobody aborts', async () => {
    const hanging = createSimulatedProvider(
      config({ failure: { mode: 'hang', after_chunks: 2 }, timeouts: { connect_ms: 5_000, first_byte_ms: 25, idle_ms: 60_000 } }),
    );
    const error = await collect(hanging.stream(request(), call())).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'timeout', message: 'simulated upstream sent no first byte within 25 ms' });
  });
});

describe('createSimulatedProvider', () => {
  it('takes its name from the config and offers no pass-through', () => {
    const named = createSimulatedProvider(config({ name: 'sim-eu' }));
    expect(named.name).toBe('sim-eu');
    expect(named.passthrough).toBeUndefined();
    expect(named.speaksNatively?.('responses') ?? false).toBe(false);
  });
});
