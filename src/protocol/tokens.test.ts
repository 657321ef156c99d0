import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from './canonical.js';
import { countTextTokens, encodeText, estimateInputTokens, EXACT_CHARACTERS, MAX_TOKENIZED_RUN, TokenBudget, utf8Length } from './tokens.js';

const request = (overrides: Partial<CanonicalRequest> = {}): CanonicalRequest => ({
  model: 'm',
  input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hello there' }] }],
  tools: [],
  toolChoice: 'auto',
  stream: false,
  ...overrides,
});

describe('token counting', () => {
  it('counts special-token markers in client text as plain text instead of throwing', () => {
    expect(countTextTokens('a <|endoftext|> b')).toBeGreaterThan(3);
    expect(countTextTokens('')).toBe(0);
  });

  it('estimates input with per-item framing, instructions and tools', () => {
    const plain = estimateInputTokens(request());
    expect(plain).toBe(3 + 4 + countTextTokens('Hello there'));
    const withInstructions = estimateInputTokens(request({ instructions: 'Be brief.' }));
    expect(withInstructions).toBe(plain + 4 + countTextTokens('Be brief.'));
    const withTools = estimateInputTokens(request({ tools: [{ name: 'weather', parameters: { type: 'object' } }] }));
    expect(withTools).toBeGreaterThan(plain);
  });
});

describe('bounded token counting', () => {
  it('counts ordinary text exactly, as the tokenizer does', () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
    expect(countTextTokens(text)).toBe(encodeText(text).length);
  });

  it('bounds a run longer than the tokenized limit by its UTF-8 bytes, never below its real count', () => {
    const run = 'a'.repeat(262_144);
    expect(countTextTokens(run)).toBe(262_144);
    // The real count of a shorter run (the tokenizer is fast enough there) is below its bound.
    const short = 'a'.repeat(4_000);
    expect(countTextTokens(short)).toBeGreaterThanOrEqual(encodeText(short).length);
    expect(countTextTokens(`hello ${'é'.repeat(100)} world`)).toBe(countTextTokens('hello ') + 200 + countTextTokens(' world'));
  });

  it('bounds long runs of white space and punctuation too, and leaves digits to the tokenizer', () => {
    expect(countTextTokens(' '.repeat(MAX_TOKENIZED_RUN + 1))).toBe(MAX_TOKENIZED_RUN + 1);
    expect(countTextTokens('!'.repeat(1_000))).toBe(1_000);
    const digits = '1234567890'.repeat(100);
    expect(countTextTokens(digits)).toBe(encodeText(digits).length);
  });

  it('measures UTF-8 without allocating: ASCII, two-byte, three-byte and surrogate pairs', () => {
    expect(utf8Length('a')).toBe(1);
    expect(utf8Length('é')).toBe(2);
    expect(utf8Length('漢')).toBe(3);
    expect(utf8Length('😀')).toBe(4);
    const mixed = 'aé漢😀';
    expect(utf8Length(mixed)).toBe(Buffer.byteLength(mixed));
  });
});

describe('the per-request budget of exact counting', () => {
  it('counts the first EXACT_CHARACTERS exactly and the rest by bytes, in the canonical estimate too', () => {
    const words = 'abcdefg '.repeat((EXACT_CHARACTERS * 2) / 8);
    const budget = new TokenBudget();
    const counted = budget.count(words);
    expect(counted).toBe(countTextTokens(words.slice(0, EXACT_CHARACTERS)) + EXACT_CHARACTERS);
    expect(budget.count('more')).toBe(4);
    const estimate = estimateInputTokens(request({ input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: words }] }] }));
    expect(estimate).toBe(3 + 4 + counted);
  });
});
