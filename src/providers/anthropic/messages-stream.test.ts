import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import { countTextTokens } from '../../protocol/tokens.js';
import { decodeSse } from '../../lib/sse-decoder.js';
import { UnreadableStreamError } from '../shared/stream-translator.js';
import { MessagesStreamTranslator, inBandErrorMessage, messageObjectEvents, readPlainTextDelta } from './messages-stream.js';
import { fixture, type AnthropicFixture } from './__fixtures__/fixtures.js';

/** Feeds `text` through the project's SSE decoder, `pieceSize` bytes at a time. */
async function translate(text: string, pieceSize = 0): Promise<{ events: CanonicalEvent[]; translator: MessagesStreamTranslator }> {
  const bytes = Buffer.from(text, 'utf8');
  async function* pieces(): AsyncGenerator<Uint8Array> {
    if (pieceSize <= 0) yield bytes;
    else for (let offset = 0; offset < bytes.length; offset += pieceSize) yield bytes.subarray(offset, offset + pieceSize);
  }
  const translator = new MessagesStreamTranslator();
  const events: CanonicalEvent[] = [];
  for await (const sse of decodeSse(pieces())) events.push(...translator.translate(sse));
  return { events, translator };
}

function event(type: string, payload: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

/** The input that MESSAGE_START reports, as the meter reads it. */
const START_INPUT = { type: 'input-usage', usage: { inputTokens: 10, cachedInputTokens: 0 } };
const MESSAGE_START = event('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 10, output_tokens: 1 } } });

describe('MessagesStreamTranslator', () => {
  it.each<AnthropicFixture>(['text-stream.sse', 'tool-use-stream.sse', 'thinking-stream.sse'])('translates %s the same whatever the chunking', async (name) => {
    const whole = await translate(fixture(name));
    expect(whole.translator.complete).toBe(true);
    for (const pieceSize of [1, 3, 17]) expect((await translate(fixture(name), pieceSize)).events).toEqual(whole.events);
  });

  it('ignores ping, unknown events, signature and citation deltas, and redacted thinking', async () => {
    const { events } = await translate(
      MESSAGE_START +
        event('ping', {}) +
        event('content_block_start', { index: 0, content_block: { type: 'redacted_thinking', data: 'EmwKAhgB' } }) +
        event('content_block_stop', { index: 0 }) +
        event('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }) +
        event('content_block_delta', { index: 1, delta: { type: 'citations_delta', citation: { type: 'char_location' } } }) +
        event('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Hi' } }) +
        event('future_event', { anything: true }) +
        event('content_block_stop', { index: 1 }) +
        event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }) +
        event('message_stop', {}),
    );
    expect(events).toEqual([
      START_INPUT,
      { type: 'text-delta', delta: 'Hi' },
      { type: 'usage', usage: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 3, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('gives a tool call whose input never streamed the arguments "{}"', async () => {
    const { events } = await translate(
      MESSAGE_START +
        event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'clock', input: {} } }) +
        event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '' } }) +
        event('content_block_stop', { index: 0 }),
    );
    expect(events).toEqual([
      START_INPUT,
      { type: 'tool-call-start', index: 0, callId: 'toolu_1', name: 'clock' },
      { type: 'tool-call-delta', index: 0, delta: '{}' },
      { type: 'tool-call-end', index: 0 },
    ]);
  });

  it('numbers tool calls by tool_use block, not by block index', async () => {
    const { events } = await translate(
      event('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }) +
        event('content_block_start', { index: 3, content_block: { type: 'tool_use', id: 'toolu_a', name: 'a', input: {} } }),
    );
    expect(events).toEqual([{ type: 'tool-call-start', index: 0, callId: 'toolu_a', name: 'a' }]);
  });

  it('takes the input and cache counts that message_delta restates', async () => {
    const { events } = await translate(
      MESSAGE_START +
        event('message_delta', { delta: { stop_reason: 'max_tokens' }, usage: { input_tokens: 12, cache_read_input_tokens: 100, cache_creation_input_tokens: 5, output_tokens: 40 } }) +
        event('message_stop', {}),
    );
    expect(events).toEqual([
      START_INPUT,
      { type: 'usage', usage: { inputTokens: 117, cachedInputTokens: 100, cacheWriteInputTokens: 5, outputTokens: 40, reasoningTokens: 0 } },
      { type: 'finish', reason: 'length' },
    ]);
  });

  it('reports no usage when the upstream sent none, so the gateway counts', async () => {
    const { events } = await translate(event('message_delta', { delta: { stop_reason: null } }) + event('message_stop', {}));
    expect(events).toEqual([{ type: 'finish', reason: 'stop' }]);
  });

  it('counts long thinking in batches to the same total', async () => {
    const parts = Array.from({ length: 300 }, (_, index) => `step ${index}: carry the ${index % 10}. `);
    const { events } = await translate(
      MESSAGE_START +
        event('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }) +
        parts.map((part) => event('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: part } })).join('') +
        event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 100_000 } }) +
        event('message_stop', {}),
    );
    const usage = events.find((candidate) => candidate.type === 'usage');
    const reasoning = usage?.type === 'usage' ? usage.usage.reasoningTokens : 0;
    const exact = countTextTokens(parts.join(''));
    // Batch boundaries fall between deltas, so the estimate stays within a token per batch.
    expect(Math.abs(reasoning - exact)).toBeLessThanOrEqual(10);
    expect(reasoning).toBeGreaterThan(1_000);
  });

  it("reports the upstream's thinking count (output_tokens_details) over its own count of the text", async () => {
    const { events } = await translate(
      MESSAGE_START +
        event('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }) +
        event('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'a short thought of several tokens in all' } }) +
        event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 90, output_tokens_details: { thinking_tokens: 64 } } }) +
        event('message_stop', {}),
    );
    const usage = events.find((candidate) => candidate.type === 'usage');
    expect(usage).toEqual({ type: 'usage', usage: expect.objectContaining({ outputTokens: 90, reasoningTokens: 64 }) });
    // With `display: "omitted"` there is no text at all, and the count is still the upstream's.
    const omitted = await translate(MESSAGE_START + event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 30, output_tokens_details: { thinking_tokens: 25 } } }));
    expect(omitted.translator.endOfBody()?.[0]).toEqual({ type: 'usage', usage: expect.objectContaining({ reasoningTokens: 25 }) });
  });

  it.each([
    ['not JSON', 'data: {oops\n\n'],
    ['no type', 'data: {"index":0}\n\n'],
    ['a delta of a block never started', event('content_block_delta', { index: 4, delta: { type: 'text_delta', text: 'x' } })],
    ['a tool_use block without an id', event('content_block_start', { index: 0, content_block: { type: 'tool_use', name: 'a', input: {} } })],
    ['a block start without an index', event('content_block_start', { content_block: { type: 'text', text: '' } })],
  ])('refuses an event that is %s', async (_what, text) => {
    await expect(translate(text)).rejects.toBeInstanceOf(UnreadableStreamError);
  });

  it('is not whole until message_delta has arrived', async () => {
    const beforeDelta = await translate(MESSAGE_START);
    expect(beforeDelta.translator.endOfBody()).toBeUndefined();
    const afterDelta = await translate(MESSAGE_START + event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }));
    expect(afterDelta.translator.complete).toBe(false);
    expect(afterDelta.translator.endOfBody()?.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });
});

describe('readPlainTextDelta (the fast reading of a text delta)', () => {
  const delta = (index: number, text: string): Record<string, unknown> => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });

  it('reads a text delta written as Anthropic writes it as the parser and the schema read it, whatever its text', () => {
    fc.assert(
      fc.property(fc.nat({ max: 999_999_999 }), fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u2028', 'é', '😀', ' ', '/') })), (index, text) => {
        const written = JSON.stringify(delta(index, text));
        expect(readPlainTextDelta(written)).toEqual({ index, delta: { type: 'text_delta', text } });
        // The same event as any other layout of it, which is parsed.
        const started = (): MessagesStreamTranslator => {
          const translator = new MessagesStreamTranslator();
          translator.translate({ event: undefined, data: JSON.stringify({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }) });
          return translator;
        };
        expect(started().translate({ event: undefined, data: written })).toEqual(started().translate({ event: undefined, data: JSON.stringify(delta(index, text), null, 1) }));
      }),
    );
  });

  it('leaves every other layout, and every other event, to the parser', () => {
    const plain = JSON.stringify(delta(0, 'Hello'));
    for (const other of [
      JSON.stringify(delta(0, 'Hello'), null, 1),
      plain.replace('"index":0,', '').replace('{', '{"index":0,'),
      plain.replace('}}', ',"citations":null}}'),
      plain.replace('}}', '},"extra":1}'),
      plain.replace('"index":0', '"index":01'),
      plain.replace('"index":0', '"index":-1'),
      plain.replace('"index":0', '"index":1.5'),
      plain.replace('"index":0', '"index":1234567890'),
      plain.replace('text_delta', 'thinking_delta'),
      plain.replace('Hello', 'Hel\\xlo'),
      plain.replace('Hello', 'Hel\tlo'),
      JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{}' } }),
    ]) {
      expect(readPlainTextDelta(other)).toBeUndefined();
    }
  });
});

describe('inBandErrorMessage', () => {
  it('prefers the message, then the type', () => {
    expect(inBandErrorMessage({ type: 'overloaded_error', message: 'Overloaded' })).toBe('Overloaded');
    expect(inBandErrorMessage({ type: 'api_error', message: '' })).toBe('api_error');
    expect(inBandErrorMessage('broken')).toBe('The upstream reported an error.');
  });
});

describe('messageObjectEvents', () => {
  it('refuses a body that is not a message', () => {
    expect(() => messageObjectEvents({ type: 'error', error: { type: 'api_error', message: 'x' } })).toThrow(UnreadableStreamError);
  });
});
