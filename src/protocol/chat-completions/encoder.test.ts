import { describe, it, expect } from 'vitest';
import type { CanonicalEvent, Usage } from '../canonical.js';
import { ChatCompletionsEncoder, type ChatEncoderOptions } from './encoder.js';

const USAGE: Usage = { inputTokens: 812, cachedInputTokens: 768, outputTokens: 64, reasoningTokens: 10 };
const CHAT_USAGE = {
  prompt_tokens: 812,
  completion_tokens: 64,
  total_tokens: 876,
  prompt_tokens_details: { cached_tokens: 768, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 10, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

function encoder(overrides: Partial<ChatEncoderOptions> = {}): ChatCompletionsEncoder {
  return new ChatCompletionsEncoder({ id: 'chatcmpl-test1', created: 1767225600, model: 'model-5.6', stream: true, includeUsage: false, ...overrides });
}

type Chunk = Record<string, unknown> & { choices: Array<{ index: number; delta: Record<string, unknown>; finish_reason: string | null }> };

/** Checks the SSE framing of every frame and returns the payloads ('[DONE]' kept as a string). */
function payloads(frames: string[]): Array<Chunk | '[DONE]'> {
  return frames.map((frame) => {
    const match = /^data: (.*)\n\n$/s.exec(frame);
    if (match === null) throw new Error(`bad frame ${JSON.stringify(frame)}`);
    const data = match[1] ?? '';
    return data === '[DONE]' ? '[DONE]' : (JSON.parse(data) as Chunk);
  });
}

function run(target: ChatCompletionsEncoder, events: CanonicalEvent[]): string[] {
  return events.flatMap((event) => target.push(event));
}

function deltas(chunks: Array<Chunk | '[DONE]'>): Array<Record<string, unknown>> {
  return chunks.flatMap((chunk) => (chunk === '[DONE]' ? [] : chunk.choices.map((choice) => choice.delta)));
}

/** What a client accumulator builds from tool-call fragments (docs/wire-protocols.md §1.4). */
function reassemble(chunks: Array<Chunk | '[DONE]'>): Array<{ id: string; name: string; arguments: string }> {
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const delta of deltas(chunks)) {
    const fragments = (delta.tool_calls ?? []) as Array<{ index: number; id?: string; function: { name?: string; arguments: string } }>;
    for (const fragment of fragments) {
      const call = (calls[fragment.index] ??= { id: '', name: '', arguments: '' });
      if (fragment.id !== undefined) call.id = fragment.id;
      if (fragment.function.name !== undefined) call.name = fragment.function.name;
      call.arguments += fragment.function.arguments;
    }
  }
  return calls;
}

const TEXT_EVENTS: CanonicalEvent[] = [
  { type: 'response-start', upstreamModel: 'upstream-x' },
  { type: 'reasoning-delta', delta: 'thinking' },
  { type: 'text-delta', delta: 'Oslo is' },
  { type: 'text-delta', delta: '' },
  { type: 'text-delta', delta: ' "snowy".\n' },
  { type: 'usage', usage: USAGE },
  { type: 'finish', reason: 'stop' },
];

describe('ChatCompletionsEncoder streaming', () => {
  it('streams a text answer: role chunk, content deltas, finish chunk, [DONE], without usage keys', () => {
    const target = encoder();
    const chunks = payloads([...run(target, TEXT_EVENTS), ...target.finish(USAGE)]);
    expect(chunks).toHaveLength(5);
    expect(chunks[4]).toBe('[DONE]');
    for (const chunk of chunks.slice(0, 4)) {
      expect(chunk).toMatchObject({ id: 'chatcmpl-test1', object: 'chat.completion.chunk', created: 1767225600, model: 'model-5.6' });
      expect(chunk).not.toHaveProperty('usage');
    }
    expect(chunks[0]).toEqual({
      id: 'chatcmpl-test1',
      object: 'chat.completion.chunk',
      created: 1767225600,
      model: 'model-5.6',
      choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }],
    });
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '', refusal: null }, { content: 'Oslo is' }, { content: ' "snowy".\n' }, {}]);
    expect((chunks[3] as Chunk).choices[0]?.finish_reason).toBe('stop');
  });

  it('adds "usage": null to every chunk and sends the usage chunk last before [DONE] when asked', () => {
    const target = encoder({ includeUsage: true });
    const chunks = payloads([...run(target, TEXT_EVENTS), ...target.finish(USAGE)]);
    expect(chunks).toHaveLength(6);
    for (const chunk of chunks.slice(0, 4)) expect((chunk as Chunk).usage).toBeNull();
    expect(chunks[4]).toEqual({ id: 'chatcmpl-test1', object: 'chat.completion.chunk', created: 1767225600, model: 'model-5.6', choices: [], usage: CHAT_USAGE });
    expect(chunks[5]).toBe('[DONE]');
  });

  it('remembers usage events instead of sending them', () => {
    const target = encoder({ includeUsage: true });
    expect(target.push({ type: 'usage', usage: USAGE })).toEqual([]);
    expect(target.upstreamUsage).toEqual(USAGE);
  });

  it('streams one tool call: the first fragment carries id, type, name and empty arguments', () => {
    const target = encoder();
    const frames = run(target, [
      { type: 'response-start', upstreamModel: 'u' },
      { type: 'tool-call-start', index: 0, callId: 'call_a1', name: 'weather' },
      { type: 'tool-call-delta', index: 0, delta: '{"city":' },
      { type: 'tool-call-delta', index: 0, delta: '"Oslo"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    const chunks = payloads([...frames, ...target.finish(USAGE)]);
    expect(deltas(chunks)).toEqual([
      { role: 'assistant', content: '', refusal: null },
      { tool_calls: [{ index: 0, id: 'call_a1', type: 'function', function: { name: 'weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] },
      {},
    ]);
    expect((chunks[4] as Chunk).choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toBe('[DONE]');
  });

  it('streams interleaved parallel tool calls one after another, so the SDK sees each call whole', () => {
    const target = encoder();
    const frames = run(target, [
      { type: 'response-start', upstreamModel: 'u' },
      { type: 'tool-call-start', index: 0, callId: 'call_a1', name: 'weather' },
      { type: 'tool-call-start', index: 1, callId: 'call_b2', name: 'weather' },
      { type: 'tool-call-delta', index: 1, delta: '{"city":' },
      { type: 'tool-call-delta', index: 0, delta: '{"city":' },
      { type: 'tool-call-delta', index: 0, delta: '"Oslo"}' },
      { type: 'tool-call-delta', index: 1, delta: '"Rome"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-end', index: 1 },
    ]);
    // No finish event: finish() must close with tool_calls.
    const chunks = payloads([...frames, ...target.finish(USAGE)]);
    expect(deltas(chunks)).toEqual([
      { role: 'assistant', content: '', refusal: null },
      { tool_calls: [{ index: 0, id: 'call_a1', type: 'function', function: { name: 'weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] },
      { tool_calls: [{ index: 1, id: 'call_b2', type: 'function', function: { name: 'weather', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{"city":"Rome"}' } }] },
      {},
    ]);
    expect(reassemble(chunks)).toEqual([
      { id: 'call_a1', name: 'weather', arguments: '{"city":"Oslo"}' },
      { id: 'call_b2', name: 'weather', arguments: '{"city":"Rome"}' },
    ]);
    expect((chunks.at(-2) as Chunk).choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('streams a held call live once the open call ends before it, and releases calls that ended while held', () => {
    const target = encoder();
    const frames = run(target, [
      { type: 'tool-call-start', index: 0, callId: 'a', name: 'f' },
      { type: 'tool-call-start', index: 1, callId: 'b', name: 'g' },
      { type: 'tool-call-start', index: 2, callId: 'c', name: 'h' },
      { type: 'tool-call-delta', index: 1, delta: '{}' },
      { type: 'tool-call-end', index: 1 },
      { type: 'tool-call-delta', index: 2, delta: '{"x":' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-delta', index: 2, delta: '1}' },
      { type: 'tool-call-end', index: 2 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    const chunks = payloads(frames);
    const order = deltas(chunks).flatMap((delta) => ((delta.tool_calls ?? []) as Array<{ index: number }>).map((fragment) => fragment.index));
    expect(order).toEqual([0, 1, 1, 2, 2, 2]);
    expect(reassemble(chunks)).toEqual([
      { id: 'a', name: 'f', arguments: '' },
      { id: 'b', name: 'g', arguments: '{}' },
      { id: 'c', name: 'h', arguments: '{"x":1}' },
    ]);
  });

  it('releases calls still held when the stream finishes, before the finish chunk', () => {
    const target = encoder();
    const frames = run(target, [
      { type: 'tool-call-start', index: 0, callId: 'a', name: 'f' },
      { type: 'tool-call-start', index: 1, callId: 'b', name: 'g' },
      { type: 'tool-call-delta', index: 1, delta: '{"y":2}' },
    ]);
    const chunks = payloads([...frames, ...target.finish(USAGE)]);
    expect(reassemble(chunks)).toEqual([
      { id: 'a', name: 'f', arguments: '' },
      { id: 'b', name: 'g', arguments: '{"y":2}' },
    ]);
    expect((chunks.at(-2) as Chunk).choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('sends the finish chunk once, and finish() without a finish event closes with stop', () => {
    const finished = encoder();
    run(finished, [{ type: 'response-start', upstreamModel: 'u' }, { type: 'finish', reason: 'length' }]);
    expect(finished.push({ type: 'finish', reason: 'stop' })).toEqual([]);
    expect(payloads(finished.finish(USAGE))).toEqual(['[DONE]']);

    const unfinished = encoder();
    run(unfinished, [{ type: 'response-start', upstreamModel: 'u' }, { type: 'text-delta', delta: 'x' }]);
    const chunks = payloads(unfinished.finish(USAGE));
    expect((chunks[0] as Chunk).choices[0]?.finish_reason).toBe('stop');
    expect(chunks[1]).toBe('[DONE]');
  });

  it('sends the role chunk first even when the first event is a delta, and never twice', () => {
    const target = encoder();
    const chunks = payloads(run(target, [{ type: 'text-delta', delta: 'a' }, { type: 'response-start', upstreamModel: 'u' }, { type: 'text-delta', delta: 'b' }]));
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '', refusal: null }, { content: 'a' }, { content: 'b' }]);
  });

  it('keeps text exact through JSON escaping', () => {
    const text = 'quote " backslash \\ newline \n unicode ✓ 😀 </script>';
    const chunks = payloads(encoder().push({ type: 'text-delta', delta: text }));
    expect(deltas(chunks)[1]).toEqual({ content: text });
  });

  it('ends a failed stream with one error frame and no [DONE]', () => {
    const target = encoder({ includeUsage: true });
    run(target, [{ type: 'response-start', upstreamModel: 'u' }, { type: 'text-delta', delta: 'partial' }]);
    const frames = target.push({ type: 'error', code: 'upstream_overloaded', message: 'Upstream model overloaded' });
    expect(frames).toEqual([
      'data: {"error":{"message":"Upstream model overloaded","type":"server_error","code":"upstream_overloaded"}}\n\n',
    ]);
    expect(target.finish(USAGE)).toEqual([]);
    expect(target.push({ type: 'text-delta', delta: 'late' })).toEqual([]);
  });

  it('fail() called directly gives the same frame, once', () => {
    const target = encoder();
    expect(payloads(target.fail('upstream_timeout', 'Timed out'))).toEqual([
      { error: { message: 'Timed out', type: 'server_error', code: 'upstream_timeout' } },
    ]);
    expect(target.fail('upstream_timeout', 'again')).toEqual([]);
    expect(target.finish(USAGE)).toEqual([]);
  });

  it('sends nothing after [DONE]', () => {
    const target = encoder();
    target.finish(USAGE);
    expect(target.push({ type: 'text-delta', delta: 'late' })).toEqual([]);
    expect(target.finish(USAGE)).toEqual([]);
    expect(target.fail('x', 'y')).toEqual([]);
  });
});

describe('ChatCompletionsEncoder non-stream', () => {
  it('returns no frames and builds the chat.completion object from the gathered text', () => {
    const target = encoder({ stream: false });
    expect(run(target, TEXT_EVENTS)).toEqual([]);
    expect(target.finish(USAGE)).toEqual([]);
    expect(target.completion(USAGE)).toEqual({
      id: 'chatcmpl-test1',
      object: 'chat.completion',
      created: 1767225600,
      model: 'model-5.6',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Oslo is "snowy".\n', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' },
      ],
      usage: CHAT_USAGE,
    });
  });

  it('answers content null and the tool calls in index order when the model only called tools', () => {
    const target = encoder({ stream: false });
    run(target, [
      { type: 'response-start', upstreamModel: 'u' },
      { type: 'tool-call-start', index: 1, callId: 'call_b2', name: 'weather' },
      { type: 'tool-call-start', index: 0, callId: 'call_a1', name: 'weather' },
      { type: 'tool-call-delta', index: 1, delta: '{"city":"Rome"}' },
      { type: 'tool-call-delta', index: 0, delta: '{"city":' },
      { type: 'tool-call-delta', index: 0, delta: '"Oslo"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-end', index: 1 },
    ]);
    const choice = (target.completion(USAGE).choices as Array<Record<string, unknown>>)[0];
    expect(choice).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        annotations: [],
        tool_calls: [
          { id: 'call_a1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_b2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  it('keeps the text beside tool calls and the upstream finish reason', () => {
    const target = encoder({ stream: false });
    run(target, [
      { type: 'text-delta', delta: 'Let me check.' },
      { type: 'tool-call-start', index: 0, callId: 'c', name: 'f' },
      { type: 'finish', reason: 'length' },
    ]);
    const choice = (target.completion(USAGE).choices as Array<{ message: Record<string, unknown>; finish_reason: string }>)[0];
    expect(choice?.message.content).toBe('Let me check.');
    expect(choice?.message.tool_calls).toEqual([{ id: 'c', type: 'function', function: { name: 'f', arguments: '' } }]);
    expect(choice?.finish_reason).toBe('length');
  });

  it('records an error event as the failure instead of encoding it', () => {
    const target = encoder({ stream: false });
    expect(target.push({ type: 'error', code: 'upstream_error', message: 'boom' })).toEqual([]);
    expect(target.failure).toEqual({ code: 'upstream_error', message: 'boom' });
    expect(target.fail('upstream_error', 'boom')).toEqual([]);
  });

  it('answers empty content (not null) when nothing was generated', () => {
    const target = encoder({ stream: false });
    const message = (target.completion({ inputTokens: 1, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 }).choices as Array<{ message: Record<string, unknown> }>)[0]?.message;
    expect(message?.content).toBe('');
    expect(message).not.toHaveProperty('tool_calls');
  });
});
