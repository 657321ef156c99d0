import { describe, expect, it } from 'vitest';
import type { CanonicalEvent, CanonicalRequest, Usage } from '../canonical.js';
import { ResponsesEncoder, randomItemId, type ResponsesEncoderOptions } from './encoder.js';

const request: CanonicalRequest = {
  model: 'model-5.6',
  input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  tools: [],
  toolChoice: 'auto',
  stream: true,
};

const usage: Usage = { inputTokens: 20, cachedInputTokens: 8, outputTokens: 12, reasoningTokens: 5 };

function makeEncoder(overrides: Partial<ResponsesEncoderOptions> = {}): ResponsesEncoder {
  const counters = new Map<string, number>();
  return new ResponsesEncoder({
    responseId: 'resp_test',
    createdAt: 1_767_225_600,
    model: 'model-5.6',
    request,
    stream: true,
    idGenerator: (prefix) => {
      const next = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, next);
      return `${prefix}_${next}`;
    },
    now: () => 1_767_225_603,
    ...overrides,
  });
}

type Payload = Record<string, unknown> & { type: string; sequence_number: number };

/** Parses frames, checking each is `event: <type>\ndata: <json>\n\n` with matching types. */
function parse(frames: string[]): Payload[] {
  return frames.map((frame) => {
    const match = /^event: ([a-z_.]+)\ndata: (.+)\n\n$/s.exec(frame);
    if (match === null) throw new Error(`bad frame: ${JSON.stringify(frame)}`);
    const payload = JSON.parse(match[2] ?? '') as Payload;
    expect(payload.type).toBe(match[1]);
    return payload;
  });
}

function run(events: CanonicalEvent[], end: (encoder: ResponsesEncoder) => string[] = (encoder) => encoder.finish(usage), encoder = makeEncoder()) {
  const frames = [...encoder.start(), ...events.flatMap((event) => encoder.push(event)), ...end(encoder)];
  const payloads = parse(frames);
  expect(payloads.map((payload) => payload.sequence_number)).toEqual(payloads.map((_, index) => index));
  return { payloads, types: payloads.map((payload) => payload.type), encoder };
}

const start: CanonicalEvent = { type: 'response-start', upstreamModel: 'up-1' };

describe('ResponsesEncoder: text', () => {
  it('emits the documented order for a plain answer, with full text in the .done events', () => {
    const { payloads, types, encoder } = run([start, { type: 'text-delta', delta: 'Hel' }, { type: 'text-delta', delta: 'lo' }, { type: 'usage', usage }, { type: 'finish', reason: 'stop' }]);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(payloads[0]).toMatchObject({ response: { id: 'resp_test', status: 'in_progress', output: [], usage: null } });
    expect(payloads[2]).toEqual({
      type: 'response.output_item.added',
      sequence_number: 2,
      output_index: 0,
      item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    expect(payloads[3]).toEqual({
      type: 'response.content_part.added',
      sequence_number: 3,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
    });
    expect(payloads[4]).toMatchObject({ item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hel', logprobs: [] });
    expect(payloads[6]).toMatchObject({ item_id: 'msg_1', text: 'Hello' });
    expect(payloads[7]).toMatchObject({ part: { type: 'output_text', text: 'Hello' } });
    expect(payloads[8]).toMatchObject({ output_index: 0, item: { id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'Hello' }] } });
    expect(payloads[9]?.response).toEqual(encoder.response());
  });

  it('builds a final response object with every required field', () => {
    const { encoder } = run([{ type: 'text-delta', delta: 'Hello' }]);
    expect(encoder.response()).toEqual({
      id: 'resp_test',
      object: 'response',
      created_at: 1_767_225_600,
      status: 'completed',
      background: false,
      completed_at: 1_767_225_603,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: 'model-5.6',
      output: [
        { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Hello' }] },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      prompt_cache_key: null,
      reasoning: { effort: null, summary: null },
      safety_identifier: null,
      service_tier: 'default',
      store: true,
      temperature: 1,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      tool_choice: 'auto',
      tools: [],
      top_logprobs: 0,
      top_p: 1,
      truncation: 'disabled',
      usage: { input_tokens: 20, input_tokens_details: { cached_tokens: 8 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 32 },
      user: null,
      metadata: {},
    });
  });

  it('echoes the effective request settings', () => {
    const encoder = makeEncoder({
      request: {
        ...request,
        instructions: 'Be brief.',
        maxOutputTokens: 300,
        temperature: 0.2,
        topP: 0.9,
        parallelToolCalls: false,
        reasoningEffort: 'high',
        responseFormat: { type: 'json_schema', name: 'thing', schema: { type: 'object' }, strict: true },
        tools: [{ name: 'weather', parameters: { type: 'object' } }],
        toolChoice: { name: 'weather' },
      },
      store: false,
      metadata: { team: 'a' },
      previousResponseId: 'resp_prev',
      echo: { user: 'u1', truncation: 'auto', reasoningSummary: 'auto', verbosity: 'low', topLogprobs: 2, promptCacheKey: 'pk', safetyIdentifier: 'sid' },
    });
    encoder.finish(usage);
    expect(encoder.response()).toMatchObject({
      instructions: 'Be brief.',
      max_output_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'thing', schema: { type: 'object' }, strict: true }, verbosity: 'low' },
      tools: [{ type: 'function', name: 'weather', description: null, parameters: { type: 'object' }, strict: null }],
      tool_choice: { type: 'function', name: 'weather' },
      store: false,
      metadata: { team: 'a' },
      previous_response_id: 'resp_prev',
      user: 'u1',
      truncation: 'auto',
      top_logprobs: 2,
      prompt_cache_key: 'pk',
      safety_identifier: 'sid',
    });
  });
});

describe('ResponsesEncoder: function calls', () => {
  it('emits the documented order for one call', () => {
    const { payloads, types } = run([
      start,
      { type: 'tool-call-start', index: 0, callId: 'call_77', name: 'weather' },
      { type: 'tool-call-delta', index: 0, delta: '{"city":"Berg' },
      { type: 'tool-call-delta', index: 0, delta: 'en"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(payloads[2]).toEqual({
      type: 'response.output_item.added',
      sequence_number: 2,
      output_index: 0,
      item: { id: 'fc_1', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_77', name: 'weather' },
    });
    expect(payloads[3]).toEqual({ type: 'response.function_call_arguments.delta', sequence_number: 3, item_id: 'fc_1', output_index: 0, delta: '{"city":"Berg' });
    expect(payloads[5]).toEqual({
      type: 'response.function_call_arguments.done',
      sequence_number: 5,
      item_id: 'fc_1',
      output_index: 0,
      name: 'weather',
      arguments: '{"city":"Bergen"}',
    });
    expect(payloads[6]).toMatchObject({ output_index: 0, item: { id: 'fc_1', status: 'completed', arguments: '{"city":"Bergen"}', call_id: 'call_77' } });
    expect(payloads[7]).toMatchObject({ response: { status: 'completed', output: [{ type: 'function_call', call_id: 'call_77' }] } });
  });

  it('gives parallel calls one item each at increasing indexes, closing open ones in output order', () => {
    const { payloads, types, encoder } = run([
      { type: 'tool-call-start', index: 0, callId: 'call_a', name: 'weather' },
      { type: 'tool-call-start', index: 1, callId: 'call_b', name: 'time' },
      { type: 'tool-call-delta', index: 1, delta: '{"tz":"CET"}' },
      { type: 'tool-call-delta', index: 0, delta: '{"city":"Oslo"}' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(types.slice(2)).toEqual([
      'response.output_item.added',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(payloads[3]).toMatchObject({ output_index: 1, item: { id: 'fc_2', call_id: 'call_b' } });
    expect(payloads[4]).toMatchObject({ item_id: 'fc_2', output_index: 1 });
    expect(payloads[5]).toMatchObject({ item_id: 'fc_1', output_index: 0 });
    expect(payloads[6]).toMatchObject({ item_id: 'fc_1', output_index: 0, arguments: '{"city":"Oslo"}' });
    expect(payloads[8]).toMatchObject({ item_id: 'fc_2', output_index: 1, arguments: '{"tz":"CET"}' });
    expect(encoder.response().output).toEqual([
      { id: 'fc_1', type: 'function_call', status: 'completed', arguments: '{"city":"Oslo"}', call_id: 'call_a', name: 'weather' },
      { id: 'fc_2', type: 'function_call', status: 'completed', arguments: '{"tz":"CET"}', call_id: 'call_b', name: 'time' },
    ]);
  });

  it('closes the open message before a call that follows text', () => {
    const { payloads, types } = run([
      { type: 'text-delta', delta: 'Checking.' },
      { type: 'tool-call-start', index: 0, callId: 'call_1', name: 'weather' },
      { type: 'tool-call-delta', index: 0, delta: '{}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(types.slice(2)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(payloads[7]).toMatchObject({ output_index: 0, item: { type: 'message', status: 'completed' } });
    expect(payloads[8]).toMatchObject({ output_index: 1, item: { type: 'function_call', id: 'fc_1' } });
  });

  it('ignores deltas and ends for calls never started, and invents a call_id when the upstream gave none', () => {
    const { encoder, types } = run([
      { type: 'tool-call-delta', index: 4, delta: 'x' },
      { type: 'tool-call-end', index: 4 },
      { type: 'tool-call-start', index: 0, callId: '', name: 'f' },
      { type: 'tool-call-start', index: 0, callId: 'again', name: 'f' },
    ]);
    expect(types.filter((type) => type === 'response.output_item.added')).toHaveLength(1);
    expect(encoder.response().output).toEqual([{ id: 'fc_1', type: 'function_call', status: 'completed', arguments: '', call_id: 'call_1', name: 'f' }]);
  });
});

describe('ResponsesEncoder: reasoning', () => {
  it('puts a reasoning item before the message and closes it when text starts', () => {
    const { payloads, types, encoder } = run([
      { type: 'reasoning-delta', delta: 'Think' },
      { type: 'reasoning-delta', delta: 'ing.' },
      { type: 'text-delta', delta: 'Answer' },
    ]);
    expect(types.slice(2)).toEqual([
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(payloads[2]).toMatchObject({ output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } });
    expect(payloads[3]).toMatchObject({ item_id: 'rs_1', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } });
    expect(payloads[6]).toMatchObject({ item_id: 'rs_1', summary_index: 0, text: 'Thinking.' });
    expect(payloads[9]).toMatchObject({ output_index: 1, item: { id: 'msg_1', type: 'message' } });
    expect(encoder.response().output).toEqual([
      { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking.' }] },
      { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Answer' }] },
    ]);
  });

  it('skips empty deltas without opening items', () => {
    const { types } = run([{ type: 'reasoning-delta', delta: '' }, { type: 'text-delta', delta: '' }]);
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.completed']);
  });
});

describe('ResponsesEncoder: endings', () => {
  it('ends with response.incomplete and max_output_tokens on finish length, items incomplete', () => {
    const { payloads, types, encoder } = run([{ type: 'text-delta', delta: 'Trunc' }, { type: 'finish', reason: 'length' }]);
    expect(types.at(-1)).toBe('response.incomplete');
    expect(payloads.at(-2)).toMatchObject({ type: 'response.output_item.done', item: { status: 'incomplete' } });
    expect(encoder.response()).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, error: null, completed_at: 1_767_225_603 });
  });

  it('reports content_filter as its own incomplete reason', () => {
    const { types, encoder } = run([{ type: 'text-delta', delta: 'x' }, { type: 'finish', reason: 'content_filter' }]);
    expect(types.at(-1)).toBe('response.incomplete');
    expect(encoder.response().incomplete_details).toEqual({ reason: 'content_filter' });
  });

  it('fails mid-way: open items close as incomplete in output order, then response.failed', () => {
    const partial: Usage = { inputTokens: 20, cachedInputTokens: 0, outputTokens: 3, reasoningTokens: 0 };
    const { payloads, types, encoder } = run(
      [
        { type: 'text-delta', delta: 'Par' },
        { type: 'tool-call-start', index: 0, callId: 'call_1', name: 'f' },
        { type: 'tool-call-delta', index: 0, delta: '{"a"' },
        { type: 'error', code: 'server_error', message: 'ignored here' },
      ],
      (encoder) => encoder.fail('server_error', 'The upstream connection was lost.', partial),
    );
    expect(types.slice(-4)).toEqual(['response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done', 'response.failed']);
    expect(payloads.at(-2)).toMatchObject({ item: { id: 'fc_1', status: 'incomplete', arguments: '{"a"' } });
    const response = encoder.response();
    expect(response).toMatchObject({
      status: 'failed',
      error: { code: 'server_error', message: 'The upstream connection was lost.' },
      incomplete_details: null,
      completed_at: null,
      usage: { input_tokens: 20, output_tokens: 3, total_tokens: 23 },
    });
    expect(response.output).toMatchObject([{ type: 'message', status: 'completed' }, { type: 'function_call', status: 'incomplete' }]);
    expect(payloads.at(-1)?.response).toEqual(response);
  });

  it('ignores everything after the terminal event', () => {
    const encoder = makeEncoder();
    encoder.push({ type: 'text-delta', delta: 'a' });
    encoder.finish(usage);
    expect(encoder.push({ type: 'text-delta', delta: 'b' })).toEqual([]);
    expect(encoder.finish(usage)).toEqual([]);
    expect(encoder.fail('server_error', 'late', usage)).toEqual([]);
    expect(encoder.response()).toMatchObject({ status: 'completed', output: [{ content: [{ text: 'a' }] }] });
  });

  it('starts implicitly when the first call is not start()', () => {
    const encoder = makeEncoder();
    const types = parse(encoder.push({ type: 'text-delta', delta: 'a' })).map((payload) => payload.type);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(encoder.start()).toEqual([]);
  });
});

describe('ResponsesEncoder: snapshots and non-streaming', () => {
  it('gives an in-progress snapshot mid-way', () => {
    const encoder = makeEncoder();
    encoder.push({ type: 'text-delta', delta: 'so far' });
    expect(encoder.response()).toMatchObject({
      status: 'in_progress',
      completed_at: null,
      usage: null,
      output: [{ id: 'msg_1', status: 'in_progress', content: [{ text: 'so far' }] }],
    });
  });

  it('produces no frames when not streaming, and the same final object', () => {
    const events: CanonicalEvent[] = [start, { type: 'reasoning-delta', delta: 'r' }, { type: 'text-delta', delta: 'Hi' }, { type: 'tool-call-start', index: 0, callId: 'c', name: 'f' }, { type: 'finish', reason: 'tool_calls' }];
    const quiet = makeEncoder({ stream: false });
    expect([...quiet.start(), ...events.flatMap((event) => quiet.push(event)), ...quiet.finish(usage)]).toEqual([]);
    const { encoder: streamed } = run(events);
    expect(quiet.response()).toEqual(streamed.response());
  });

  it('draws random OpenAI-like ids by default', () => {
    expect(randomItemId('msg')).toMatch(/^msg_[0-9a-f]{48}$/);
    expect(randomItemId('fc')).not.toBe(randomItemId('fc'));
    const encoder = new ResponsesEncoder({ responseId: 'resp_x', createdAt: 1, model: 'm', request, stream: false });
    encoder.push({ type: 'text-delta', delta: 'a' });
    encoder.finish(usage);
    const response = encoder.response();
    expect(response.output).toMatchObject([{ id: expect.stringMatching(/^msg_[0-9a-f]{48}$/) }]);
    expect(response.completed_at).toBeGreaterThan(1_700_000_000);
  });
});

describe('ResponsesEncoder: namespaced tools', () => {
  const namespaced: CanonicalRequest = {
    ...request,
    tools: [
      { name: 'collaboration__spawn_agent', parameters: { type: 'object' }, declared: { namespace: 'collaboration', name: 'spawn_agent' } },
      { name: 'functions__exec', parameters: { type: 'object' }, custom: {}, declared: { namespace: 'functions', name: 'exec' } },
    ],
  };

  it('gives a call back under the namespace and name the client declared', () => {
    const { payloads, encoder } = run(
      [
        start,
        { type: 'tool-call-start', index: 0, callId: 'call_a', name: 'collaboration__spawn_agent' },
        { type: 'tool-call-delta', index: 0, delta: '{"task":"x"}' },
        { type: 'tool-call-end', index: 0 },
        { type: 'tool-call-start', index: 1, callId: 'call_b', name: 'functions__exec' },
        { type: 'tool-call-delta', index: 1, delta: '{"input":"text(1)"}' },
        { type: 'tool-call-end', index: 1 },
        { type: 'finish', reason: 'tool_calls' },
      ],
      undefined,
      makeEncoder({ request: namespaced }),
    );
    expect(encoder.response().output).toEqual([
      { id: 'fc_1', type: 'function_call', status: 'completed', arguments: '{"task":"x"}', call_id: 'call_a', name: 'spawn_agent', namespace: 'collaboration' },
      { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_b', name: 'exec', namespace: 'functions', input: 'text(1)' },
    ]);
    const added = payloads.filter((payload) => payload.type === 'response.output_item.added').map((payload) => payload.item);
    expect(added).toMatchObject([{ name: 'spawn_agent', namespace: 'collaboration' }, { name: 'exec', namespace: 'functions' }]);
    expect(payloads.find((payload) => payload.type === 'response.function_call_arguments.done')).toMatchObject({ name: 'spawn_agent' });
  });
});

describe('ResponsesEncoder: compaction', () => {
  const seal = (summary: string) => `sealed(${summary.length})`;

  it('sends no text: the summary becomes one sealed compaction item, added and done whole, then response.completed', () => {
    const events: CanonicalEvent[] = [start, { type: 'reasoning-delta', delta: 'thinking' }, { type: 'text-delta', delta: 'Goals: ' }, { type: 'text-delta', delta: 'ship.' }, { type: 'finish', reason: 'length' }, { type: 'usage', usage }];
    const { payloads, types, encoder } = run(events, (encoder) => encoder.finish(usage), makeEncoder({ compaction: { seal } }));
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.output_item.done', 'response.completed']);
    const item = { id: 'cmp_1', type: 'compaction', encrypted_content: 'sealed(12)' };
    expect(payloads[2]).toMatchObject({ output_index: 0, item });
    expect(payloads[3]).toMatchObject({ output_index: 0, item });
    // A summary cut at the cap is still the compaction the client needs.
    expect(encoder.response()).toMatchObject({ status: 'completed', incomplete_details: null, output: [item], usage: { input_tokens: 20, output_tokens: 12 } });
  });

  it('non-streamed: the same single item in the response object', () => {
    const encoder = makeEncoder({ stream: false, compaction: { seal } });
    expect([...encoder.start(), ...encoder.push({ type: 'text-delta', delta: 'abc' }), ...encoder.finish(usage)]).toEqual([]);
    expect(encoder.response().output).toEqual([{ id: 'cmp_1', type: 'compaction', encrypted_content: 'sealed(3)' }]);
  });
});
