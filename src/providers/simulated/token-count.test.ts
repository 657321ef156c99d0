import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countTextTokens } from '../../protocol/tokens.js';
import { splitIntoPieces, splitIntoTokenChunks, truncateToTokens } from './token-count.js';

const samples = [
  'Simulated answer from model-5.6 to "hello". The gateway counts every token.',
  'Emoji 🦄🦄 and flags 🇫🇷 split across tokens: naïve café 日本語のテキスト, Ωμέγα.',
  '{"city":"Paris","unit":"celsius","nested":{"ok":true}}',
  'literal special token <|endoftext|> in user text',
  'x',
];

describe('countTextTokens', () => {
  it('counts like o200k_base and treats special-token spellings as text', () => {
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('hello world')).toBe(countTokens('hello world'));
    expect(countTextTokens('a <|endoftext|> b')).toBeGreaterThan(3);
  });
});

describe('splitIntoTokenChunks', () => {
  it('returns pieces that concatenate to exactly the text, for every chunk size', () => {
    for (const text of samples) {
      for (let size = 1; size <= 8; size++) {
        const chunks = splitIntoTokenChunks(text, size);
        expect(chunks.join('')).toBe(text);
        expect(chunks.every((chunk) => chunk !== '' && !chunk.includes('\uFFFD'))).toBe(true);
      }
    }
  });

  it('makes chunks of about the requested size', () => {
    const text = samples[0] ?? '';
    const chunks = splitIntoTokenChunks(text, 3);
    expect(chunks.length).toBe(Math.ceil(countTokens(text) / 3));
  });

  it('returns no chunks for empty text and tolerates a silly size', () => {
    expect(splitIntoTokenChunks('', 3)).toEqual([]);
    expect(splitIntoTokenChunks('abc def', 0).join('')).toBe('abc def');
  });
});

describe('splitIntoPieces', () => {
  it('splits into at most the given number of pieces', () => {
    const text = samples[2] ?? '';
    const pieces = splitIntoPieces(text, 3);
    expect(pieces.join('')).toBe(text);
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    expect(pieces.length).toBeLessThanOrEqual(3);
  });
});

describe('truncateToTokens', () => {
  it('keeps a text that fits', () => {
    expect(truncateToTokens('hello world', 10)).toEqual({ text: 'hello world', tokens: countTokens('hello world'), truncated: false });
  });

  it('cuts to a prefix within the budget whose reported count is its real count', () => {
    for (const text of samples) {
      const total = countTextTokens(text);
      for (let budget = 0; budget < total; budget++) {
        const cut = truncateToTokens(text, budget);
        expect(cut.truncated).toBe(true);
        expect(text.startsWith(cut.text)).toBe(true);
        expect(cut.tokens).toBe(countTextTokens(cut.text));
        expect(cut.tokens).toBeLessThanOrEqual(budget);
        expect(cut.text.includes('\uFFFD')).toBe(false);
      }
    }
  });

  it('treats a negative budget as zero', () => {
    expect(truncateToTokens('hello', -5)).toEqual({ text: '', tokens: 0, truncated: true });
  });
});
