/**
 * The long runs `countTextTokens` bounds by their bytes are found by a loop over the code points;
 * it replaced a regular expression that V8 ran by recursion and that threw a RangeError (stack
 * overflow) on a run of about 5.6 million characters. The loop must count exactly as the
 * expression did, and any run of any length must count without throwing.
 */
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countTextTokens, MAX_TOKENIZED_RUN, utf8Length } from './tokens.js';

const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/** The counting as it was, with the regular expression: the reference, for texts of modest size. */
const LONG_RUN = new RegExp(
  `[\\p{L}\\p{M}]{${MAX_TOKENIZED_RUN + 1},}|[^\\s\\p{L}\\p{M}\\p{N}]{${MAX_TOKENIZED_RUN + 1},}|\\s{${MAX_TOKENIZED_RUN + 1},}`,
  'gu',
);
function countWithExpression(text: string): number {
  if (text === '') return 0;
  if (text.length <= MAX_TOKENIZED_RUN) return countTokens(text, NO_SPECIAL_TOKENS);
  let total = 0;
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    if (run.index > from) total += countTokens(text.slice(from, run.index), NO_SPECIAL_TOKENS);
    total += utf8Length(run[0]);
    from = run.index + run[0].length;
  }
  if (from < text.length) total += countTokens(text.slice(from), NO_SPECIAL_TOKENS);
  return total;
}

/**
 * Characters of every class and edge: ASCII letters, digits, punctuation, spaces and line ends;
 * combining marks, letters and digits outside ASCII and outside the Basic Multilingual Plane, emoji,
 * the odd white space (no-break, ideographic, byte order mark), other numbers, lone surrogates, and
 * the special-token spelling.
 */
const CHARACTERS = ['a', 'Z', 'é', 'e\u0301', '\u0301', '漢', 'ж', '\u{1D400}', '7', '٣', '²', 'Ⅻ', '\u{1D7CE}', '!', '.', '-', '😀', '\u2028', ' ', '\t', '\n', '\r\n', '\u00a0', '\u3000', '\ufeff', '\ud800', '\udc00', '<|endoftext|>'];

/** Texts made of runs of one piece repeated, the lengths around the limit the likeliest. */
const runs = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...CHARACTERS), fc.string({ unit: 'binary', minLength: 1, maxLength: 3 })),
      fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: MAX_TOKENIZED_RUN - 2, max: MAX_TOKENIZED_RUN + 2 }), fc.integer({ min: 1, max: 200 })),
    ),
    { maxLength: 10 },
  )
  .map((pieces) => pieces.map(([piece, times]) => piece.repeat(times)).join(''));

describe('the long-run scanner of the token counter', () => {
  it('counts every text exactly as the regular expression it replaced did (seeded)', () => {
    fc.assert(
      fc.property(runs, (text) => {
        expect(countTextTokens(text)).toBe(countWithExpression(text));
      }),
      { seed: 16, numRuns: 2_000 },
    );
  });

  it('counts random Unicode, surrogates included, as the regular expression did (seeded)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (text) => {
        expect(countTextTokens(text)).toBe(countWithExpression(text));
      }),
      { seed: 16, numRuns: 1_000 },
    );
  });

  it('counts a run of six million characters of each class by its bytes, without throwing', () => {
    for (const character of ['x', 'é', '漢', '\u{1D400}', '!', '😀', ' ', '\n']) {
      const run = character.repeat(6_000_000 / character.length);
      expect(countTextTokens(run), JSON.stringify(character)).toBe(Buffer.byteLength(run));
      // Between digits (no class of their own): the run is bounded, the digits are tokenized.
      expect(countTextTokens(`1${run}2`), JSON.stringify(character)).toBe(1 + Buffer.byteLength(run) + 1);
    }
  });

  it('leaves a long run of digits to the tokenizer, which groups them by three', () => {
    const digits = '1234567890'.repeat(6_000);
    expect(countTextTokens(digits)).toBe(countTokens(digits, NO_SPECIAL_TOKENS));
  });
});
