import { describe, expect, it } from 'vitest';
import type { CanonicalEvent, Usage } from '../canonical.js';
import { MessagesEncoder, toMessagesUsage } from './encoder.js';

const USAGE: Usage = { inputTokens: 100, cachedInputTokens: 30, cacheWriteInputTokens: 20, outputTokens: 40, reasoningTokens: 10 };

function parse(frames: string[]): Array<{ event: string; data: Record<string, unknown> }> {
  return frames
    .join('')
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      const data = JSON.parse(dataLine!.slice('data: '.length)) as Record<string, unknown>;
      expect(data.type).toBe(eventLine!.slice('event: '.length));
      return { event: eventLine!.slice('event: '.length), data };
    });
}

function stream(events: CanonicalEvent[], omitThinking = false) {
  const encoder = new MessagesEncoder({ id: 'msg_1', model: 'm', stream: true, omitThinking });
  const frames = [...encoder.start(), ...events.flatMap((event) => encoder.push(event)), ...encoder.finish(USAGE)];
  return parse(frames);
}

describe('toMessagesUsage', () => {
  it("gives Anthropic's input_tokens without either cache count, and the thinking count", () => {
    expect(toMessagesUsage(USAGE)).toEqual({ input_tokens: 50, cache_creation_input_tokens: 20, cache_read_input_tokens: 30, output_tokens: 40, output_tokens_details: { thinking_tokens: 10 } });
  });
});

describe('MessagesEncoder, streaming', () => {
  it('opens and closes one block at a time: thinking, text, tool use', () => {
    const events = stream([
      { type: 'response-start', upstreamModel: 'u' },
      { type: 'reasoning-delta', delta: 'Hmm' },
      { type: 'text-delta', delta: 'Let me ' },
      { type: 'text-delta', delta: 'look.' },
      { type: 'tool-call-start', index: 0, callId: 'c1', name: 'ls' },
      { type: 'tool-call-delta', index: 0, delta: '{"dir":' },
      { type: 'tool-call-delta', index: 0, delta: '"."}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'usage', usage: USAGE },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(events.map((event) => `${event.event}${event.data.index === undefined ? '' : `:${String(event.data.index)}`}`)).toEqual([
      'message_start',
      'ping',
      'content_block_start:0',
      'content_block_delta:0',
      'content_block_stop:0',
      'content_block_start:1',
      'content_block_delta:1',
      'content_block_delta:1',
      'content_block_stop:1',
      'content_block_start:2',
      'content_block_delta:2',
      'content_block_delta:2',
      'content_block_stop:2',
      'message_delta',
      'message_stop',
    ]);
    expect(events[2]!.data.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });
    expect(events[3]!.data.delta).toEqual({ type: 'thinking_delta', thinking: 'Hmm' });
    expect(events[9]!.data.content_block).toEqual({ type: 'tool_use', id: 'c1', name: 'ls', input: {} });
    expect(events[10]!.data.delta).toEqual({ type: 'input_json_delta', partial_json: '{"dir":' });
    expect(events[13]!.data).toEqual({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: toMessagesUsage(USAGE) });
  });

  it('leaves the thinking text out when the client asked for display: omitted', () => {
    const events = stream([{ type: 'reasoning-delta', delta: 'secret' }, { type: 'text-delta', delta: 'Hi' }], true);
    expect(events.map((event) => event.event)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(JSON.stringify(events)).not.toContain('secret');
  });

  it('holds a tool call that starts while another streams, and releases it whole after', () => {
    const events = stream([
      { type: 'tool-call-start', index: 0, callId: 'a', name: 'x' },
      { type: 'tool-call-start', index: 1, callId: 'b', name: 'y' },
      { type: 'tool-call-delta', index: 1, delta: '{"b":1}' },
      { type: 'tool-call-delta', index: 0, delta: '{"a":1}' },
      { type: 'tool-call-end', index: 1 },
      { type: 'tool-call-end', index: 0 },
    ]);
    const blocks = events.filter((event) => event.event.startsWith('content_block')).map((event) => [event.event, event.data.index, (event.data.content_block as { id?: string } | undefined)?.id ?? (event.data.delta as { partial_json?: string } | undefined)?.partial_json]);
    expect(blocks).toEqual([
      ['content_block_start', 0, 'a'],
      ['content_block_delta', 0, '{"a":1}'],
      ['content_block_stop', 0, undefined],
      ['content_block_start', 1, 'b'],
      ['content_block_delta', 1, '{"b":1}'],
      ['content_block_stop', 1, undefined],
    ]);
    expect(events.at(-2)!.data.delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });
  });

  it('holds text that arrives while a call streams, and sends it after the call', () => {
    const events = stream([
      { type: 'tool-call-start', index: 0, callId: 'a', name: 'x' },
      { type: 'tool-call-delta', index: 0, delta: '{"a":' },
      { type: 'text-delta', delta: 'Meanwhile.' },
      { type: 'tool-call-delta', index: 0, delta: '1}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'text-delta', delta: ' Done.' },
    ]);
    const blocks = events.filter((event) => event.event.startsWith('content_block')).map((event) => [event.event, event.data.index, (event.data.delta as { partial_json?: string; text?: string } | undefined) ?? null]);
    expect(blocks).toEqual([
      ['content_block_start', 0, null],
      ['content_block_delta', 0, { type: 'input_json_delta', partial_json: '{"a":' }],
      ['content_block_delta', 0, { type: 'input_json_delta', partial_json: '1}' }],
      ['content_block_stop', 0, null],
      ['content_block_start', 1, null],
      ['content_block_delta', 1, { type: 'text_delta', text: 'Meanwhile.' }],
      ['content_block_delta', 1, { type: 'text_delta', text: ' Done.' }],
      ['content_block_stop', 1, null],
    ]);
  });

  it('sends held text at the end when the call never ended', () => {
    const events = stream([
      { type: 'tool-call-start', index: 0, callId: 'a', name: 'x' },
      { type: 'text-delta', delta: 'Late.' },
    ]);
    expect(events.map((event) => event.event)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events[5]!.data.delta).toEqual({ type: 'text_delta', text: 'Late.' });
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
  ] as const)('maps finish %s to stop_reason %s', (reason, stopReason) => {
    const events = stream([{ type: 'text-delta', delta: 'x' }, { type: 'finish', reason }]);
    expect((events.at(-2)!.data.delta as { stop_reason: string }).stop_reason).toBe(stopReason);
  });

  it('ends a failed stream with an error event and nothing after it', () => {
    const encoder = new MessagesEncoder({ id: 'msg_1', model: 'm', stream: true, omitThinking: false });
    encoder.start();
    encoder.push({ type: 'text-delta', delta: 'x' });
    expect(parse(encoder.fail('upstream_error', 'It broke.'))).toEqual([{ event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'It broke.' } } }]);
    expect(encoder.finish(USAGE)).toEqual([]);
    expect(encoder.push({ type: 'text-delta', delta: 'y' })).toEqual([]);
  });
});

describe('MessagesEncoder, whole message', () => {
  it('gathers thinking, text and tool use into one message', () => {
    const encoder = new MessagesEncoder({ id: 'msg_1', model: 'm', stream: false, omitThinking: false });
    expect(encoder.start()).toEqual([]);
    for (const event of [
      { type: 'reasoning-delta', delta: 'Hm' },
      { type: 'reasoning-delta', delta: 'm' },
      { type: 'text-delta', delta: 'A' },
      { type: 'text-delta', delta: 'B' },
      { type: 'tool-call-start', index: 0, callId: 'c', name: 'n' },
      { type: 'tool-call-delta', index: 0, delta: '{"k":' },
      { type: 'tool-call-delta', index: 0, delta: '2}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, callId: 'd', name: 'n' },
      { type: 'tool-call-delta', index: 1, delta: 'not json' },
      { type: 'tool-call-end', index: 1 },
    ] satisfies CanonicalEvent[]) expect(encoder.push(event)).toEqual([]);
    expect(encoder.finish(USAGE)).toEqual([]);
    expect(encoder.message(USAGE)).toEqual({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [
        { type: 'thinking', thinking: 'Hmm', signature: '' },
        { type: 'text', text: 'AB' },
        { type: 'tool_use', id: 'c', name: 'n', input: { k: 2 } },
        { type: 'tool_use', id: 'd', name: 'n', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: toMessagesUsage(USAGE),
    });
  });
});
