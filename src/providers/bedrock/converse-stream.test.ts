/**
 * The ConverseStream translator and whole Converse answers (converse-stream.ts), and the chunks of
 * InvokeModelWithResponseStream (invoke-claude.ts), on hand-made events: the canonical events they
 * give, the usage with the prompt cache's counts, the answer whole without its usage report or cut
 * short, and every bad input refused as unreadable.
 */
import { describe, expect, it } from 'vitest';
import { UnreadableStreamError } from '../shared/stream-translator.js';
import { converseAnswerEvents, ConverseStreamTranslator } from './converse-stream.js';
import { chunkEvent, InvokeStreamTranslator } from './invoke-claude.js';

const event = (name: string, payload: unknown) => ({ event: name, data: JSON.stringify(payload) });

describe('the ConverseStream translator', () => {
  it('reads stop reasons as finish reasons', () => {
    for (const [stopReason, finish] of [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['max_tokens', 'length'],
      ['model_context_window_exceeded', 'length'],
      ['tool_use', 'tool_calls'],
      ['guardrail_intervened', 'content_filter'],
      ['content_filtered', 'content_filter'],
      ['something_new', 'stop'],
    ] as const) {
      const translator = new ConverseStreamTranslator();
      translator.translate(event('messageStop', { stopReason }));
      expect(translator.translate(event('metadata', {})).at(-1)).toEqual({ type: 'finish', reason: finish });
      expect(translator.complete).toBe(true);
    }
  });

  it('adds the cache reads and writes to the input, and closes a tool call left open', () => {
    const translator = new ConverseStreamTranslator();
    expect(translator.translate(event('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 't1', name: 'f' } } }))).toEqual([{ type: 'tool-call-start', index: 0, callId: 't1', name: 'f' }]);
    expect(translator.translate(event('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{}' } } }))).toEqual([{ type: 'tool-call-delta', index: 0, delta: '{}' }]);
    translator.translate(event('messageStop', { stopReason: 'tool_use' }));
    expect(translator.translate(event('metadata', { usage: { inputTokens: 7, outputTokens: 3, cacheReadInputTokens: 50, cacheWriteInputTokens: 20, totalTokens: 80 } }))).toEqual([
      { type: 'tool-call-end', index: 0 },
      { type: 'usage', usage: { inputTokens: 77, cachedInputTokens: 50, cacheWriteInputTokens: 20, outputTokens: 3, reasoningTokens: 0 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('ignores events and deltas newer than this code, and empty fragments', () => {
    const translator = new ConverseStreamTranslator();
    expect(translator.translate(event('messageStart', { role: 'assistant' }))).toEqual([]);
    expect(translator.translate(event('citationsDelta', { anything: true }))).toEqual([]);
    expect(translator.translate(event('contentBlockDelta', { contentBlockIndex: 0, delta: { citation: {} } }))).toEqual([]);
    expect(translator.translate(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: '' } }))).toEqual([]);
    expect(translator.translate(event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig' } } }))).toEqual([]);
  });

  it('is whole without the usage report once messageStop came, and cut short before it', () => {
    const stopped = new ConverseStreamTranslator();
    stopped.translate(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }));
    stopped.translate(event('messageStop', { stopReason: 'end_turn' }));
    expect(stopped.endOfBody()).toEqual([{ type: 'finish', reason: 'stop' }]);
    const cut = new ConverseStreamTranslator();
    cut.translate(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }));
    expect(cut.endOfBody()).toBeUndefined();
  });

  it('makes an exception message an error event naming it', () => {
    const translator = new ConverseStreamTranslator();
    expect(translator.translate({ event: 'exception:throttlingException', data: '{"message":"Slow down."}' })).toEqual([{ type: 'error', code: 'upstream_error', message: 'throttlingException: Slow down.' }]);
    expect(translator.translate({ event: 'exception:internalServerException', data: 'not json' })).toEqual([{ type: 'error', code: 'upstream_error', message: 'The upstream reported internalServerException.' }]);
  });

  it('refuses garbage: a payload that is not a JSON object, a known event of the wrong shape, tool input for no tool block', () => {
    expect(() => new ConverseStreamTranslator().translate({ event: 'contentBlockDelta', data: 'nope' })).toThrow(UnreadableStreamError);
    expect(() => new ConverseStreamTranslator().translate({ event: 'contentBlockDelta', data: '[1]' })).toThrow(UnreadableStreamError);
    expect(() => new ConverseStreamTranslator().translate(event('contentBlockDelta', { contentBlockIndex: -1, delta: {} }))).toThrow('does not match its type');
    expect(() => new ConverseStreamTranslator().translate(event('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: '', name: 'f' } } }))).toThrow(UnreadableStreamError);
    expect(() => new ConverseStreamTranslator().translate(event('contentBlockDelta', { contentBlockIndex: 4, delta: { toolUse: { input: '{' } } }))).toThrow('not a tool call');
  });

  it('bills a usage report it cannot believe as unreported counts (the meter then counts)', () => {
    const translator = new ConverseStreamTranslator();
    translator.translate(event('messageStop', { stopReason: 'end_turn' }));
    const usage = translator.translate(event('metadata', { usage: { inputTokens: -4, outputTokens: 'many' } })).find((candidate) => candidate.type === 'usage');
    expect(usage?.type === 'usage' && Number.isNaN(usage.usage.inputTokens)).toBe(true);
  });
});

describe('a whole Converse answer', () => {
  it('gives text, reasoning, tool calls, usage and finish', () => {
    const events = converseAnswerEvents({
      output: { message: { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'Hmm.', signature: 's' } } }, { text: 'Hi' }, { toolUse: { toolUseId: 't', name: 'f', input: { a: 1 } } }] } },
      stopReason: 'tool_use',
      usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
    });
    expect(events.map((candidate) => candidate.type)).toEqual(['reasoning-delta', 'text-delta', 'tool-call-start', 'tool-call-delta', 'tool-call-end', 'usage', 'finish']);
    expect(events.find((candidate) => candidate.type === 'tool-call-delta')).toMatchObject({ delta: '{"a":1}' });
  });

  it('refuses a body that is not a Converse answer', () => {
    expect(() => converseAnswerEvents({ choices: [] })).toThrow(UnreadableStreamError);
  });
});

describe('InvokeModelWithResponseStream chunks', () => {
  const chunk = (payload: unknown) => ({ event: 'chunk', data: JSON.stringify({ bytes: Buffer.from(JSON.stringify(payload)).toString('base64'), p: 'abc' }) });

  it('hand each Messages event inside to Anthropic’s translator', () => {
    const translator = new InvokeStreamTranslator();
    expect(translator.translate(chunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }))).toEqual([]);
    expect(translator.translate(chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } }))).toEqual([{ type: 'text-delta', delta: 'Hi' }]);
    expect(translator.translate(chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }))).toEqual([]);
    expect(translator.translate(chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 1 } })).at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(translator.complete).toBe(true);
  });

  it('end on an exception message, and ignore other events', () => {
    const translator = new InvokeStreamTranslator();
    expect(translator.translate({ event: 'somethingNew', data: '{}' })).toEqual([]);
    expect(translator.translate({ event: 'exception:modelStreamErrorException', data: '{"message":"Broke."}' })).toEqual([{ type: 'error', code: 'upstream_error', message: 'modelStreamErrorException: Broke.' }]);
  });

  it('refuse a chunk without bytes, or whose bytes are not a Messages event', () => {
    expect(() => chunkEvent('{"p":"abc"}')).toThrow('without bytes');
    expect(() => chunkEvent(JSON.stringify({ bytes: Buffer.from('not json').toString('base64') }))).toThrow('not a Messages stream event');
    expect(() => chunkEvent(JSON.stringify({ bytes: Buffer.from('{"no":"type"}').toString('base64') }))).toThrow(UnreadableStreamError);
    expect(chunkEvent(JSON.stringify({ bytes: Buffer.from('{"type":"ping"}').toString('base64') }))).toEqual({ event: 'ping', data: '{"type":"ping"}' });
  });
});
