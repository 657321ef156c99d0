import { describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import { UnreadableStreamError } from '../shared/stream-translator.js';
import type { RememberedCall } from './call-memory.js';
import { fromGeminiUsage, generateCallId, GeminiStreamTranslator } from './stream-translator.js';

const text = (value: string, extra: Record<string, unknown> = {}) => ({ candidates: [{ content: { role: 'model', parts: [{ text: value }] }, index: 0, ...extra }] });
const finished = (reason: string) => ({ candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: reason, index: 0 }] });

function run(chunks: unknown[], translator = new GeminiStreamTranslator()): { events: CanonicalEvent[]; ending: CanonicalEvent[] | undefined } {
  const events = chunks.flatMap((chunk) => translator.read(chunk));
  return { events, ending: translator.endOfBody() };
}

describe('fromGeminiUsage', () => {
  it('adds tool-use prompt tokens to input and thoughts to output', () => {
    expect(
      fromGeminiUsage({ promptTokenCount: 100, cachedContentTokenCount: 64, candidatesTokenCount: 20, thoughtsTokenCount: 30, toolUsePromptTokenCount: 7 }),
    ).toEqual({ inputTokens: 107, cachedInputTokens: 64, outputTokens: 50, reasoningTokens: 30 });
  });

  it('counts missing fields as zero', () => {
    expect(fromGeminiUsage({ promptTokenCount: 5, cachedContentTokenCount: null, candidatesTokenCount: null, thoughtsTokenCount: null, toolUsePromptTokenCount: null })).toEqual({
      inputTokens: 5,
      cachedInputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
    });
  });
});

describe('GeminiStreamTranslator', () => {
  it('keeps the last usage and gives usage then finish at the end of the body', () => {
    const { events, ending } = run([
      { ...text('a'), usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1 } },
      { ...finished('STOP'), usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2 } },
      // usage may trail the finishing chunk; nothing else after it counts
      { ...text('late'), usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, toolUsePromptTokenCount: 4 } },
    ]);
    expect(events).toEqual([{ type: 'text-delta', delta: 'a' }]);
    expect(ending).toEqual([
      { type: 'usage', usage: { inputTokens: 14, cachedInputTokens: 0, outputTokens: 3, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it.each([
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['BLOCKLIST', 'content_filter'],
    ['SPII', 'content_filter'],
    ['IMAGE_SAFETY', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'stop'],
    ['OTHER', 'stop'],
    ['SOMETHING_NEW', 'stop'],
  ])('maps finishReason %s to %s', (reason, expected) => {
    expect(run([text('x'), finished(reason)]).ending?.at(-1)).toEqual({ type: 'finish', reason: expected });
  });

  it('ends with tool_calls when a STOP follows calls, but keeps length', () => {
    const callChunk = { candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: {} } }] }, index: 0 }] };
    expect(run([callChunk, finished('STOP')]).ending?.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls' });
    expect(run([callChunk, finished('MAX_TOKENS')]).ending?.at(-1)).toEqual({ type: 'finish', reason: 'length' });
  });

  it("uses Gemini's call id when it sends one, else a fresh one, and reports signatures", () => {
    const remembered: Array<[string, RememberedCall]> = [];
    const translator = new GeminiStreamTranslator({ onFunctionCall: (callId, call) => remembered.push([callId, call]), newCallId: () => 'call_generated' });
    const { events } = run(
      [
        {
          candidates: [
            {
              content: { parts: [{ functionCall: { id: 'fc-7', name: 'f', args: { a: 1 } }, thoughtSignature: 'sig==' }, { functionCall: { name: 'g' } }] },
              finishReason: 'STOP',
            },
          ],
        },
      ],
      translator,
    );
    expect(events).toEqual([
      { type: 'tool-call-start', index: 0, callId: 'fc-7', name: 'f' },
      { type: 'tool-call-delta', index: 0, delta: '{"a":1}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, callId: 'call_generated', name: 'g' },
      { type: 'tool-call-delta', index: 1, delta: '{}' },
      { type: 'tool-call-end', index: 1 },
    ]);
    expect(remembered).toEqual([
      ['fc-7', { upstreamId: true, signature: 'sig==' }],
      ['call_generated', { upstreamId: false }],
    ]);
  });

  it('generates distinct OpenAI-shaped call ids', () => {
    const ids = new Set(Array.from({ length: 200 }, () => generateCallId()));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^call_[0-9a-f]{24}$/);
  });

  it('reads thought parts as reasoning and skips empty text', () => {
    const { events } = run([{ candidates: [{ content: { parts: [{ text: 'hmm', thought: true }, { text: '' }, { text: 'Yes.' }] } }] }]);
    expect(events).toEqual([
      { type: 'reasoning-delta', delta: 'hmm' },
      { type: 'text-delta', delta: 'Yes.' },
    ]);
  });

  it('reads only candidate 0', () => {
    const { events } = run([{ candidates: [{ index: 1, content: { parts: [{ text: 'other' }] } }, { index: 0, content: { parts: [{ text: 'mine' }] } }] }]);
    expect(events).toEqual([{ type: 'text-delta', delta: 'mine' }]);
  });

  it('finishes a blocked prompt as content_filter', () => {
    const { events, ending } = run([{ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 } }]);
    expect(events).toEqual([]);
    expect(ending).toEqual([
      { type: 'usage', usage: { inputTokens: 12, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 } },
      { type: 'finish', reason: 'content_filter' },
    ]);
  });

  it('has no ending when no finishReason came', () => {
    expect(run([text('cut')]).ending).toBeUndefined();
  });

  it('turns an error object into an error event', () => {
    expect(run([{ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }]).events).toEqual([
      { type: 'error', code: 'upstream_error', message: 'UNAVAILABLE: The model is overloaded.' },
    ]);
  });

  it.each([['[1,2]'], ['"text"'], ['{"candidates":[{"content":{"parts":[{"functionCall":{"args":{}}}]}}]}'], ['{"candidates":"nope"}']])('refuses garbage: %s', (data) => {
    expect(() => new GeminiStreamTranslator().translate({ data })).toThrow(UnreadableStreamError);
  });

  it('refuses a chunk that is not JSON', () => {
    expect(() => new GeminiStreamTranslator().translate({ data: '{"candidates":' })).toThrow(/not JSON/);
  });

  it('tolerates odd leaves', () => {
    const { events } = run([{ candidates: [{ index: 'zero', content: { parts: [{ text: 5 }, { text: 'ok', thought: 'yes' }] }, finishReason: 7 }], usageMetadata: 'n/a' }]);
    expect(events).toEqual([{ type: 'text-delta', delta: 'ok' }]);
  });
});
