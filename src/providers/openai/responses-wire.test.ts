import { describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import { ResponsesEventReader, readResponsesUsage, responsesObjectEvents, toResponsesBody } from './responses-wire.js';
import { UnreadableStreamError } from '../shared/stream-translator.js';

describe('toResponsesBody', () => {
  it('sends hosted tools and kept input items as the client sent them, namespaced tools under their flat names', () => {
    const search = { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } };
    const body = toResponsesBody(
      {
        model: 'tollgate-mini',
        input: [
          { type: 'message', role: 'user', content: [{ type: 'text', text: 'a' }] },
          { type: 'message', role: 'user', content: [{ type: 'text', text: 'b' }] },
        ],
        opaqueInput: [
          { index: 1, raw: search },
          { index: 2, raw: { type: 'compaction', encrypted_content: 'zz' } },
        ],
        tools: [{ name: 'ns__spawn', declared: { namespace: 'ns', name: 'spawn' } }],
        hostedTools: [{ type: 'web_search', raw: { type: 'web_search', external_web_access: true }, param: 'tools[1].type' }],
        toolChoice: 'auto',
        stream: true,
      },
      { upstreamModel: 'gpt-5', maxOutputTokens: 64 },
    );
    expect(body.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a' }] },
      search,
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'b' }] },
      { type: 'compaction', encrypted_content: 'zz' },
    ]);
    expect(body.tools).toEqual([
      { type: 'function', name: 'ns__spawn', parameters: { type: 'object', properties: {} }, strict: false },
      { type: 'web_search', external_web_access: true },
    ]);
  });

  it('maps items, flat tools, a named tool choice, effort and format', () => {
    const body = toResponsesBody(
      {
        model: 'tollgate-mini',
        instructions: 'Be brief.',
        input: [
          { type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image', url: 'data:image/png;base64,AA' }] },
          { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Calling.' }] },
          { type: 'function_call', callId: 'call_1', name: 'clock', arguments: '{}' },
          { type: 'function_call_output', callId: 'call_1', output: '12:00' },
        ],
        tools: [{ name: 'clock' }],
        toolChoice: { name: 'clock' },
        parallelToolCalls: false,
        reasoningEffort: 'xhigh',
        responseFormat: { type: 'json_object' },
        stream: true,
      },
      { upstreamModel: 'gpt-5', maxOutputTokens: 64 },
    );
    expect(body).toEqual({
      model: 'gpt-5',
      instructions: 'Be brief.',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }, { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'auto' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Calling.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'clock', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: '12:00' },
      ],
      tools: [{ type: 'function', name: 'clock', parameters: { type: 'object', properties: {} }, strict: false }],
      tool_choice: { type: 'function', name: 'clock' },
      parallel_tool_calls: false,
      reasoning: { effort: 'xhigh' },
      text: { format: { type: 'json_object' } },
      max_output_tokens: 64,
      stream: true,
      store: false,
    });
  });

  it("sends the client's prompt_cache_key on, and none when the client gave none", () => {
    const request = { model: 'm', input: [], tools: [], toolChoice: 'auto' as const, stream: true };
    expect(toResponsesBody({ ...request, promptCacheKey: 'session-42' }, { upstreamModel: 'gpt-5', maxOutputTokens: 64 }).prompt_cache_key).toBe('session-42');
    expect(toResponsesBody(request, { upstreamModel: 'gpt-5', maxOutputTokens: 64 })).not.toHaveProperty('prompt_cache_key');
  });
});

describe('ResponsesEventReader', () => {
  function readAll(reader: ResponsesEventReader, payloads: unknown[]): CanonicalEvent[] {
    return payloads.flatMap((payload) => reader.read(payload));
  }

  it('numbers tool calls by appearance, not by output index, and closes them', () => {
    const reader = new ResponsesEventReader();
    const events = readAll(reader, [
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { type: 'message', id: 'msg_1' } },
      { type: 'response.output_text.delta', sequence_number: 3, output_index: 0, delta: 'Let me check.' },
      { type: 'response.output_item.added', sequence_number: 4, output_index: 1, item: { type: 'function_call', id: 'fc_1', call_id: 'call_77', name: 'weather', arguments: '' } },
      { type: 'response.function_call_arguments.delta', sequence_number: 5, output_index: 1, delta: '{"city":' },
      { type: 'response.function_call_arguments.delta', sequence_number: 6, output_index: 1, delta: '"Bergen"}' },
      { type: 'response.output_item.done', sequence_number: 7, output_index: 1, item: { type: 'function_call', call_id: 'call_77', name: 'weather', arguments: '{"city":"Bergen"}' } },
      { type: 'response.output_item.done', sequence_number: 8, output_index: 2, item: { type: 'function_call', call_id: 'call_78', name: 'clock', arguments: '{}' } },
      { type: 'response.completed', sequence_number: 9, response: { status: 'completed', usage: { input_tokens: 10, output_tokens: 5 } } },
    ]);
    expect(events).toEqual([
      { type: 'text-delta', delta: 'Let me check.' },
      { type: 'tool-call-start', index: 0, callId: 'call_77', name: 'weather' },
      { type: 'tool-call-delta', index: 0, delta: '{"city":' },
      { type: 'tool-call-delta', index: 0, delta: '"Bergen"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, callId: 'call_78', name: 'clock' },
      { type: 'tool-call-delta', index: 1, delta: '{}' },
      { type: 'tool-call-end', index: 1 },
      { type: 'usage', usage: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 5, reasoningTokens: 0 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(reader.terminal).toBe(true);
    expect(reader.nextSequenceNumber).toBe(10);
  });

  it('reads reasoning deltas, an incomplete answer and a failed one', () => {
    expect(new ResponsesEventReader().read({ type: 'response.reasoning_summary_text.delta', delta: 'hmm' })).toEqual([{ type: 'reasoning-delta', delta: 'hmm' }]);
    expect(new ResponsesEventReader().read({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } })).toEqual([
      { type: 'finish', reason: 'length' },
    ]);
    expect(new ResponsesEventReader().read({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'content_filter' } } })).toEqual([
      { type: 'finish', reason: 'content_filter' },
    ]);
    const failed = new ResponsesEventReader();
    expect(failed.read({ type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: 'broke' }, usage: { input_tokens: 4, output_tokens: 0 } } })).toEqual([
      { type: 'usage', usage: { inputTokens: 4, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 } },
      { type: 'error', code: 'upstream_error', message: 'broke', upstreamCode: 'server_error' },
    ]);
    expect(failed.terminal).toBe(true);
  });

  it('ignores hosted-tool events with unexpected shapes but refuses non-events', () => {
    const reader = new ResponsesEventReader();
    expect(reader.read({ type: 'response.image_generation_call.partial_image', delta: { bytes: 1 }, output_index: 'x' })).toEqual([]);
    expect(() => reader.read({ no: 'type' })).toThrow(UnreadableStreamError);
    expect(() => reader.read(7)).toThrow(UnreadableStreamError);
    expect(reader.terminal).toBe(false);
    expect(reader.nextSequenceNumber).toBe(0);
  });
});

describe('responsesObjectEvents', () => {
  it('reads text, calls, usage and finish of a whole response', () => {
    expect(
      responsesObjectEvents({
        status: 'completed',
        output: [
          { type: 'reasoning', id: 'rs_1', summary: [] },
          { type: 'function_call', call_id: 'call_1', name: 'clock', arguments: '{}' },
        ],
        usage: { input_tokens: 3, input_tokens_details: { cached_tokens: 1 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 1 } },
      }),
    ).toEqual([
      { type: 'tool-call-start', index: 0, callId: 'call_1', name: 'clock' },
      { type: 'tool-call-delta', index: 0, delta: '{}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'usage', usage: { inputTokens: 3, cachedInputTokens: 1, outputTokens: 2, reasoningTokens: 1 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });
});

describe('readResponsesUsage', () => {
  const USAGE_SHAPES: unknown[] = [
    undefined,
    null,
    'x',
    [1, 2],
    {},
    { input_tokens: 1, output_tokens: 2 },
    { input_tokens: 1, output_tokens: 2, input_tokens_details: { cached_tokens: 1 }, output_tokens_details: { reasoning_tokens: 1 } },
    { input_tokens: null, output_tokens: undefined, input_tokens_details: null, output_tokens_details: 'x' },
    { input_tokens: -1, output_tokens: 1.5, input_tokens_details: { cached_tokens: '3' }, output_tokens_details: { reasoning_tokens: 2 ** 53 } },
    { input_tokens: 2 ** 53 - 1, output_tokens: -0, input_tokens_details: [], output_tokens_details: { reasoning_tokens: true } },
    { input_tokens: 1e300, output_tokens: {}, input_tokens_details: { cached_tokens: null } },
  ];

  it.each(USAGE_SHAPES.map((usage) => [JSON.stringify(usage) ?? 'undefined', usage]))('reads %s as the schema does', (_shown, usage) => {
    const bySchema = responsesObjectEvents({ status: 'completed', output: [], usage }).find((event) => event.type === 'usage');
    expect(readResponsesUsage(usage)).toEqual(bySchema?.type === 'usage' ? bySchema.usage : undefined);
  });
});
