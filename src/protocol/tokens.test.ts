import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from './canonical.js';
import { YIELD_CHARACTERS } from './text-slices.js';
import { countInputTokens, countTextTokens, encodeText, estimateInputTokens, EXACT_CHARACTERS, inputTokenMemo, MAX_TOKENIZED_RUN, TokenBudget, TokenMemo, utf8Length } from './tokens.js';

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

describe('the exact count of the input (billed when the upstream reports no usage)', () => {
  /** Runs the count to its end, counting its pauses. */
  const run = (work: Generator<void, number>): { tokens: number; pauses: number } => {
    let pauses = 0;
    for (;;) {
      const step = work.next();
      if (step.done === true) return { tokens: step.value, pauses };
      pauses += 1;
    }
  };

  it('frames a request as the estimate does, and equals it within the exact budget', () => {
    const tools = [{ name: 'weather', parameters: { type: 'object' } }];
    const input: CanonicalRequest['input'] = [
      { type: 'message', role: 'user', content: [{ type: 'text', text: 'Hello there' }, { type: 'image', url: 'https://example.com/a.png' }] },
      { type: 'function_call', callId: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', callId: 'c1', output: 'sunny' },
    ];
    const small = request({ instructions: 'Be brief.', input, tools });
    expect(run(countInputTokens(small)).tokens).toBe(estimateInputTokens(small));
  });

  it('counts every text exactly past the budget (the estimate counts bytes there), pausing between slices', () => {
    const prose = Array.from({ length: 60_000 }, (_, index) => ['The', 'gateway', 'bills', 'what', 'the', 'upstream', 'read,', 'and', 'nothing', 'more.\n'][index % 10]).join(' ');
    expect(prose.length).toBeGreaterThan(4 * EXACT_CHARACTERS);
    const long = request({ instructions: 'Be brief.', input: [{ type: 'message', role: 'user', content: [{ type: 'text', text: prose }] }] });
    const { tokens, pauses } = run(countInputTokens(long));
    expect(tokens).toBe(3 + 4 + countTextTokens('Be brief.') + 4 + encodeText(prose).length);
    expect(tokens).toBe(estimateInputTokens(long, new TokenBudget(Number.MAX_SAFE_INTEGER)));
    expect(estimateInputTokens(long)).toBeGreaterThan(2 * tokens);
    // Slices end before a space, so a pause comes after two of them at most.
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(prose.length / (2 * YIELD_CHARACTERS)));
  });
});

describe('the memo of input counts', () => {
  const systemPrompt = Array.from({ length: 300 }, (_, index) => `Rule ${index}: read a file before editing it, and explain each change. `).join('\n');
  const longText = 'Long text with words, numbers 12345 and ünïcödé — and emoji 🎉. '.repeat(400);
  // Same length, start, middle and end as longText: the same fingerprint, different text.
  const twin = `${longText.slice(0, 1_000)}X${longText.slice(1_001)}`;
  const texts = ['', 'role', 'content', 'a <|endoftext|> b', 'Say hello.', systemPrompt, longText, twin, 'a'.repeat(5_000), ' \n'.repeat(300)];

  it('gives the same count as the tokenizer, the first time and from memory', () => {
    const memo = new TokenMemo(1_000_000);
    expect(longText.length).toBeGreaterThan(16_383);
    expect(twin.length).toBe(longText.length);
    for (let round = 0; round < 3; round += 1) {
      for (const text of texts) expect(memo.count(text), JSON.stringify(text.slice(0, 30))).toBe(countTextTokens(text));
    }
    // longText and twin took turns in one slot; each is accounted once at most.
    expect(memo.characters).toBeLessThanOrEqual(texts.reduce((sum, text) => sum + text.length + 500, 0));
    expect(memo.has(systemPrompt)).toBe(true);
    // A copy of a remembered text (as the next request's body brings) finds it.
    expect(memo.has(JSON.parse(JSON.stringify(systemPrompt)) as string)).toBe(true);
    expect(memo.has(`${systemPrompt}.`)).toBe(false);
  });

  it('counts a request the same as without it, through TokenBudget and the canonical estimate', () => {
    const input: CanonicalRequest['input'] = [{ type: 'message', role: 'user', content: [{ type: 'text', text: longText }] }];
    const expected = 3 + 4 + countTextTokens(systemPrompt) + 4 + countTextTokens(longText);
    for (let round = 0; round < 2; round += 1) {
      expect(estimateInputTokens(request({ instructions: systemPrompt, input }))).toBe(expected);
    }
    expect(inputTokenMemo.has(systemPrompt)).toBe(true);
  });

  it('stays within two generations of characters, keeping the texts in use', () => {
    const memo = new TokenMemo(2_000);
    const kept = 'The system prompt every request sends. '.repeat(5);
    for (let index = 0; index < 2_000; index += 1) {
      const text = `unique text number ${index} ${'x y '.repeat(index % 50)}`;
      expect(memo.count(text)).toBe(countTextTokens(text));
      expect(memo.count(kept)).toBe(countTextTokens(kept));
      expect(memo.characters).toBeLessThanOrEqual(4_000);
    }
    expect(memo.has(kept)).toBe(true);
    expect(memo.has('unique text number 0 ')).toBe(false);
    // A text larger than a generation is counted, not remembered.
    const huge = 'word '.repeat(1_000);
    expect(memo.count(huge)).toBe(countTextTokens(huge));
    expect(memo.has(huge)).toBe(false);
  });

  it('keeps the memo of input counts bounded however much new text arrives', () => {
    const before = inputTokenMemo.characters;
    for (let index = 0; index < 300; index += 1) inputTokenMemo.count(`${index} `.repeat(4_000));
    expect(before).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(inputTokenMemo.characters).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(inputTokenMemo.characters).toBeGreaterThan(2 * 1024 * 1024);
  });
});
