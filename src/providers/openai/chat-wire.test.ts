import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../../protocol/canonical.js';
import { ChatChunkReader, ChatStreamTranslator, chatCompletionEvents, readChatUsage, toChatBody } from './chat-wire.js';
import { UnreadableStreamError } from '../shared/stream-translator.js';

const CALL = { upstreamModel: 'gpt-4.1-mini', maxOutputTokens: 256 };

function request(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return { model: 'tollgate-mini', input: [], tools: [], toolChoice: 'auto', stream: true, ...overrides };
}

describe('toChatBody', () => {
  it('maps a tool round trip: calls merged into the assistant turn, outputs as tool messages', () => {
    const body = toChatBody(
      request({
        instructions: 'Be brief.',
        input: [
          { type: 'message', role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'text', text: 'Weather here and in Rome?' },
              { type: 'image', url: 'https://img.example/harbor.jpg', detail: 'low' },
            ],
          },
          { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Checking both.' }] },
          { type: 'function_call', callId: 'call_a1', name: 'weather', arguments: '{"city":"Oslo"}' },
          { type: 'function_call', callId: 'call_b2', name: 'weather', arguments: '{"city":"Rome"}' },
          { type: 'function_call_output', callId: 'call_a1', output: '-3C' },
          { type: 'function_call_output', callId: 'call_b2', output: '17C' },
          { type: 'function_call', callId: 'call_c3', name: 'clock', arguments: '{}' },
        ],
      }),
      CALL,
    );
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Use metric units.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather here and in Rome?' },
          { type: 'image_url', image_url: { url: 'https://img.example/harbor.jpg', detail: 'low' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking both.',
        tool_calls: [
          { id: 'call_a1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_b2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a1', content: '-3C' },
      { role: 'tool', tool_call_id: 'call_b2', content: '17C' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_c3', type: 'function', function: { name: 'clock', arguments: '{}' } }] },
    ]);
  });

  it('keeps a refusal of an earlier assistant turn', () => {
    const body = toChatBody(request({ input: [{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help.' }] }] }), CALL);
    expect(body.messages).toEqual([{ role: 'assistant', content: null, refusal: 'I cannot help.' }]);
  });

  it('sets the caps and settings the gateway controls', () => {
    const body = toChatBody(
      request({
        reasoningEffort: 'high',
        topP: 0.9,
        maxOutputTokens: 99_999,
        responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
      }),
      CALL,
    );
    expect(body).toEqual({
      model: 'gpt-4.1-mini',
      messages: [],
      max_completion_tokens: 256,
      reasoning_effort: 'high',
      top_p: 0.9,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('sends tool settings only with tools, and nests a named tool choice', () => {
    expect(toChatBody(request({ parallelToolCalls: false, toolChoice: 'none' }), CALL)).not.toHaveProperty('parallel_tool_calls');
    expect(toChatBody(request({ parallelToolCalls: false, toolChoice: 'none' }), CALL)).not.toHaveProperty('tool_choice');
    const body = toChatBody(request({ tools: [{ name: 'clock', strict: true }], toolChoice: { name: 'clock' }, parallelToolCalls: false }), CALL);
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'clock', strict: true } }]);
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'clock' } });
    expect(body.parallel_tool_calls).toBe(false);
  });

  it("sends the client's prompt_cache_key on, and none when the client gave none", () => {
    expect(toChatBody(request({ promptCacheKey: 'session-42' }), CALL).prompt_cache_key).toBe('session-42');
    expect(toChatBody(request(), CALL)).not.toHaveProperty('prompt_cache_key');
  });
});

describe('ChatChunkReader', () => {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): string =>
    JSON.stringify({
      id: 'c',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });

  it('reads reasoning text from either non-standard field', () => {
    const reader = new ChatChunkReader();
    expect(reader.read(chunk({ reasoning_content: 'think' }))).toEqual([{ type: 'reasoning-delta', delta: 'think' }]);
    expect(reader.read(chunk({ reasoning: 'more' }))).toEqual([{ type: 'reasoning-delta', delta: 'more' }]);
    expect(reader.read(chunk({ reasoning: { effort: 'low' } }))).toEqual([]);
  });

  it('opens tool calls of servers that omit the index, and reports tool_calls for a `stop` finish', () => {
    const reader = new ChatChunkReader();
    const events = [
      ...reader.read(chunk({ tool_calls: [{ id: 'call_1', function: { name: 'a', arguments: '{"x"' } }] })),
      ...reader.read(chunk({ tool_calls: [{ function: { arguments: ':1}' } }] })),
      ...reader.read(chunk({ tool_calls: [{ id: 'call_2', function: { name: 'b', arguments: '{}' } }] })),
      ...reader.read(chunk({}, 'stop')),
    ];
    expect(events).toEqual([
      { type: 'tool-call-start', index: 0, callId: 'call_1', name: 'a' },
      { type: 'tool-call-delta', index: 0, delta: '{"x"' },
      { type: 'tool-call-delta', index: 0, delta: ':1}' },
      { type: 'tool-call-start', index: 1, callId: 'call_2', name: 'b' },
      { type: 'tool-call-delta', index: 1, delta: '{}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-end', index: 1 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('gives a tool call without an id a generated one', () => {
    const [start] = new ChatChunkReader().read(chunk({ tool_calls: [{ index: 0, function: { name: 'a' } }] }));
    expect(start).toMatchObject({ type: 'tool-call-start', index: 0, name: 'a', callId: expect.stringMatching(/^call_[0-9a-f]{32}$/) });
  });

  it('maps finish reasons, usage with details missing, and an in-band error', () => {
    const reader = new ChatChunkReader();
    expect(reader.read(chunk({}, 'length'))).toEqual([{ type: 'finish', reason: 'length' }]);
    expect(reader.read(JSON.stringify({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } }))).toEqual([
      { type: 'usage', usage: { inputTokens: 5, cachedInputTokens: 0, outputTokens: 2, reasoningTokens: 0 } },
    ]);
    expect(new ChatChunkReader().read(chunk({}, 'content_filter'))).toEqual([{ type: 'finish', reason: 'content_filter' }]);
    expect(new ChatChunkReader().read(JSON.stringify({ error: { message: 'overloaded' } }))).toEqual([{ type: 'error', code: 'upstream_error', message: 'overloaded' }]);
    expect(new ChatChunkReader().read(JSON.stringify({ error: 'nope' }))).toEqual([{ type: 'error', code: 'upstream_error', message: 'The upstream reported an error.' }]);
  });

  it('tolerates odd fields but refuses what is not a chunk', () => {
    const reader = new ChatChunkReader();
    expect(reader.read(JSON.stringify({ choices: [{ index: 0, delta: { content: 'ok', tool_calls: 'weird' }, finish_reason: null }], usage: 'n/a' }))).toEqual([{ type: 'text-delta', delta: 'ok' }]);
    expect(() => reader.read(JSON.stringify([1, 2]))).toThrow(UnreadableStreamError);
    expect(() => reader.read(JSON.stringify('text'))).toThrow(UnreadableStreamError);
    expect(() => reader.read(JSON.stringify({ choices: 'none' }))).toThrow(UnreadableStreamError);
  });
});

describe('ChatStreamTranslator', () => {
  it('holds usage and finish back until [DONE], usage first', () => {
    const translator = new ChatStreamTranslator();
    const finishChunk = JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    expect(translator.translate({ event: undefined, data: finishChunk })).toEqual([]);
    expect(translator.translate({ event: undefined, data: JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }) })).toEqual([]);
    expect(translator.complete).toBe(false);
    expect(translator.translate({ event: undefined, data: '[DONE]' })).toEqual([
      { type: 'usage', usage: { inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(translator.complete).toBe(true);
  });

  it("gives usage reported twice (Groq's x_groq on the finish chunk, then a usage chunk) once, the last report", () => {
    const translator = new ChatStreamTranslator();
    const finishChunk = JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], x_groq: { id: 'req_1', usage: { queue_time: 0.01, prompt_tokens: 23, completion_tokens: 19, total_tokens: 42 } } });
    expect(translator.translate({ event: undefined, data: finishChunk })).toEqual([]);
    expect(translator.translate({ event: undefined, data: JSON.stringify({ choices: [], usage: { prompt_tokens: 23, completion_tokens: 19, prompt_tokens_details: { cached_tokens: 3 } } }) })).toEqual([]);
    expect(translator.translate({ event: undefined, data: '[DONE]' })).toEqual([
      { type: 'usage', usage: { inputTokens: 23, cachedInputTokens: 3, outputTokens: 19, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it("reads Groq's usage from x_groq alone, and DeepSeek's cache hits as cached input", () => {
    const groq = new ChatStreamTranslator();
    groq.translate({ event: undefined, data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], x_groq: { id: 'req_1', usage: { prompt_tokens: 23, completion_tokens: 19 } } }) });
    expect(groq.endOfBody()).toEqual([
      { type: 'usage', usage: { inputTokens: 23, cachedInputTokens: 0, outputTokens: 19, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop' },
    ]);
    const deepseek = new ChatChunkReader();
    const usage = { prompt_tokens: 120, completion_tokens: 40, prompt_cache_hit_tokens: 100, prompt_cache_miss_tokens: 20, completion_tokens_details: { reasoning_tokens: 16 } };
    expect(deepseek.read(JSON.stringify({ choices: [], usage }))).toEqual([{ type: 'usage', usage: { inputTokens: 120, cachedInputTokens: 100, outputTokens: 40, reasoningTokens: 16 } }]);
    expect(readChatUsage(usage)).toEqual({ inputTokens: 120, cachedInputTokens: 100, outputTokens: 40, reasoningTokens: 16 });
  });

  it("reads Mistral's content chunks: thinking as reasoning, text as text, in order; other shapes as nothing", () => {
    const content = [
      { type: 'thinking', thinking: [{ type: 'text', text: 'Hm, ' }, { type: 'text', text: 'a greeting.' }, 'odd'] },
      { type: 'text', text: 'Hello' },
      { type: 'image_url', image_url: 'x' },
      { type: 'thinking', thinking: 'not a list' },
      { type: 'text', text: 7 },
      'loose',
    ];
    const expected = [
      { type: 'reasoning-delta', delta: 'Hm, a greeting.' },
      { type: 'text-delta', delta: 'Hello' },
    ];
    expect(new ChatChunkReader().read(JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] }))).toEqual(expected);
    expect(chatCompletionEvents({ choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] })).toEqual([...expected, { type: 'finish', reason: 'stop' }]);
    for (const odd of [[], {}, 7, true, [{ type: 'thinking', thinking: [] }]]) {
      expect(new ChatChunkReader().read(JSON.stringify({ choices: [{ index: 0, delta: { content: odd } }] }))).toEqual([]);
    }
  });

  it("counts xAI's reasoning tokens as output when its total says the completion left them out", () => {
    // xAI: total = prompt + completion + reasoning; OpenAI: total = prompt + completion (reasoning inside).
    const xai = { prompt_tokens: 32, completion_tokens: 9, total_tokens: 341, completion_tokens_details: { reasoning_tokens: 300 } };
    const openai = { prompt_tokens: 32, completion_tokens: 309, total_tokens: 341, completion_tokens_details: { reasoning_tokens: 300 } };
    const billed = { inputTokens: 32, cachedInputTokens: 0, outputTokens: 309, reasoningTokens: 300 };
    for (const usage of [xai, openai]) {
      expect(new ChatChunkReader().read(JSON.stringify({ choices: [], usage }))).toEqual([{ type: 'usage', usage: billed }]);
      expect(readChatUsage(usage)).toEqual(billed);
    }
    // Without a total, or one that adds up neither way, completion_tokens is the output, as on OpenAI's wire.
    for (const total of [undefined, 999]) {
      const usage = { prompt_tokens: 32, completion_tokens: 9, total_tokens: total, completion_tokens_details: { reasoning_tokens: 300 } };
      expect(readChatUsage(usage)).toEqual({ inputTokens: 32, cachedInputTokens: 0, outputTokens: 9, reasoningTokens: 300 });
      expect(new ChatChunkReader().read(JSON.stringify({ choices: [], usage }))).toEqual([{ type: 'usage', usage: { inputTokens: 32, cachedInputTokens: 0, outputTokens: 9, reasoningTokens: 300 } }]);
    }
  });

  it('closes open calls at [DONE] when no finish reason came', () => {
    const translator = new ChatStreamTranslator();
    translator.translate({ event: undefined, data: JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '' } }] } }] }) });
    expect(translator.translate({ event: undefined, data: '[DONE]' })).toEqual([
      { type: 'tool-call-end', index: 0 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('calls a body that ended before any finish cut short', () => {
    const translator = new ChatStreamTranslator();
    translator.translate({ event: undefined, data: JSON.stringify({ choices: [{ index: 0, delta: { content: 'hi' } }] }) });
    expect(translator.endOfBody()).toBeUndefined();
    expect(() => translator.translate({ event: undefined, data: '{oops' })).toThrow(UnreadableStreamError);
  });
});

describe('chatCompletionEvents', () => {
  it('reads a tool-calling answer', () => {
    const events = chatCompletionEvents({
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 10, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 2 }, completion_tokens_details: { reasoning_tokens: 1 } },
    });
    expect(events).toEqual([
      { type: 'tool-call-start', index: 0, callId: 'call_1', name: 'f' },
      { type: 'tool-call-delta', index: 0, delta: '{"a":1}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'usage', usage: { inputTokens: 10, cachedInputTokens: 2, outputTokens: 4, reasoningTokens: 1 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('still meters the usage of a body it cannot otherwise read', () => {
    expect(chatCompletionEvents({ choices: 'x', usage: { prompt_tokens: 3, completion_tokens: 1 } })).toEqual([
      { type: 'usage', usage: { inputTokens: 3, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0 } },
    ]);
    expect(chatCompletionEvents(null)).toEqual([]);
  });
});

describe('readChatUsage', () => {
  const USAGE_SHAPES: unknown[] = [
    undefined,
    null,
    'x',
    [1, 2],
    {},
    { prompt_tokens: 1, completion_tokens: 2 },
    { prompt_tokens: 1, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 1 }, completion_tokens_details: { reasoning_tokens: 1 } },
    { prompt_tokens: null, completion_tokens: undefined, prompt_tokens_details: null, completion_tokens_details: 'x' },
    { prompt_tokens: -1, completion_tokens: 1.5, prompt_tokens_details: { cached_tokens: '3' }, completion_tokens_details: { reasoning_tokens: 2 ** 53 } },
    { prompt_tokens: 2 ** 53 - 1, completion_tokens: -0, prompt_tokens_details: [], completion_tokens_details: { reasoning_tokens: true } },
    { prompt_tokens: 1e300, completion_tokens: {}, prompt_tokens_details: { cached_tokens: null } },
    { prompt_tokens: 120, completion_tokens: 40, prompt_cache_hit_tokens: 100, prompt_cache_miss_tokens: 20 },
    { prompt_tokens: 120, completion_tokens: 40, prompt_cache_hit_tokens: 'x', prompt_tokens_details: { cached_tokens: 90 } },
    { prompt_tokens: 120, completion_tokens: 40, prompt_cache_hit_tokens: -1 },
    { prompt_tokens: 32, completion_tokens: 9, total_tokens: 341, completion_tokens_details: { reasoning_tokens: 300 } },
    { prompt_tokens: 32, completion_tokens: 9, total_tokens: '341', completion_tokens_details: { reasoning_tokens: 300 } },
    { prompt_tokens: 32, completion_tokens: 9, total_tokens: 1.5, completion_tokens_details: { reasoning_tokens: 300 } },
    { prompt_tokens: null, completion_tokens: 9, total_tokens: 309, completion_tokens_details: { reasoning_tokens: 300 } },
    { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, completion_tokens_details: { reasoning_tokens: 0 } },
  ];

  it.each(USAGE_SHAPES.map((usage) => [JSON.stringify(usage) ?? 'undefined', usage]))('reads %s as the schema does', (_shown, usage) => {
    const bySchema = chatCompletionEvents({ choices: [], usage }).find((event) => event.type === 'usage');
    expect(readChatUsage(usage)).toEqual(bySchema?.type === 'usage' ? bySchema.usage : undefined);
  });
});
