import { describe, expect, it } from 'vitest';
import { isSaneUsage } from '../../protocol/canonical.js';
import { fromGeminiUsage } from '../gemini/stream-translator.js';
import { fromChatUsage, readChatUsage } from '../openai/chat-wire.js';
import { fromResponsesUsage, readResponsesUsage } from '../openai/responses-wire.js';

describe('a usage object without its input or output count', () => {
  it('is no report on any reader (the meter then counts), where it used to bill 0', () => {
    expect(isSaneUsage(readChatUsage({ total_tokens: 42 })!)).toBe(false);
    expect(isSaneUsage(readChatUsage({ prompt_tokens: 7 })!)).toBe(false);
    expect(isSaneUsage(fromChatUsage({ completion_tokens: 3 }))).toBe(false);
    expect(isSaneUsage(readResponsesUsage({ prompt_tokens: 7, completion_tokens: 3 })!)).toBe(false);
    expect(isSaneUsage(fromResponsesUsage({ output_tokens: 3 }))).toBe(false);
    expect(isSaneUsage(fromGeminiUsage({ candidatesTokenCount: 3 }))).toBe(false);
  });

  it('leaves the detail counts optional: absent cached or reasoning tokens are 0, and Gemini may omit candidates', () => {
    expect(readChatUsage({ prompt_tokens: 7, completion_tokens: 3 })).toEqual({ inputTokens: 7, cachedInputTokens: 0, outputTokens: 3, reasoningTokens: 0 });
    expect(readResponsesUsage({ input_tokens: 7, output_tokens: 3 })).toEqual({ inputTokens: 7, cachedInputTokens: 0, outputTokens: 3, reasoningTokens: 0 });
    expect(fromGeminiUsage({ promptTokenCount: 7 })).toEqual({ inputTokens: 7, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 });
  });
});
