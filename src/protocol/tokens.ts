/**
 * Token counting with the real tokenizer (gpt-tokenizer, o200k_base), bounded so that no input can
 * make it slow. The one place that calls the tokenizer, so that client text containing special-token
 * markers such as `<|endoftext|>` is counted as plain text instead of throwing.
 *
 * BPE is quadratic in the length of one pre-token (262,144 letters "a" took 25 s of CPU), so a run of
 * more than MAX_TOKENIZED_RUN characters of one class (letters, punctuation, white space) is not
 * tokenized: it is bounded by its UTF-8 byte count instead, which no byte-level BPE can exceed (every
 * token stands for at least one byte). What is left between such runs tokenizes in linear time.
 * The runs are found by a loop over the code points, not a regular expression: V8's backtracking
 * engine recurses per character of a `{65,}` run and threw a RangeError (stack overflow) on a run of
 * about 5.6 million letters, which an upstream's answer can hold.
 */
import { createRequire } from 'node:module';
import type * as GptTokenizer from 'gpt-tokenizer';
import type { CanonicalRequest } from './canonical.js';
import { slicesOf, YIELD_CHARACTERS } from './text-slices.js';

/**
 * The tokenizer's CommonJS build, required rather than imported. Its o200k_base ranks are a module
 * of 4 MB of source that builds one array: as an ES module, V8 keeps that source and its compiled
 * top-level code for as long as the process lives (the module record holds them); as a CommonJS
 * module, they are collected once it has run. About 5.5 MB less heap for the same tables (the
 * package's own files, the same tokenizer). Everything here uses this one instance.
 */
const { countTokens, decode, encode } = createRequire(import.meta.url)('gpt-tokenizer') as typeof GptTokenizer;

const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/** Framing tokens OpenAI adds around each message, and once to prime the reply. */
const TOKENS_PER_ITEM = 4;
const TOKENS_PER_REPLY = 3;
/** A flat allowance for an image (a high-detail 512px tile set); images are billed by the upstream. */
export const TOKENS_PER_IMAGE = 765;

/** Longest run of one character class that is tokenized; longer runs count their UTF-8 bytes. */
export const MAX_TOKENIZED_RUN = 64;

/**
 * The classes of code points whose long runs are bounded: letters with their marks, white space
 * (JavaScript's `\s`), and everything else but numbers. Numbers are left out (DIGIT): o200k splits
 * them into groups of at most three, which stays linear.
 */
const DIGIT = 0;
const LETTER = 1;
const SPACE = 2;
const OTHER = 3;
type RunClass = typeof DIGIT | typeof LETTER | typeof SPACE | typeof OTHER;

const LETTER_OR_MARK = /[\p{L}\p{M}]/u;
const WHITE_SPACE = /\s/u;
const NUMBER = /\p{N}/u;
/** The class + 1 of each Basic Multilingual Plane code point once classified (0: not yet). */
const bmpClasses = new Uint8Array(0x10000);

function classify(character: string): RunClass {
  if (LETTER_OR_MARK.test(character)) return LETTER;
  if (WHITE_SPACE.test(character)) return SPACE;
  return NUMBER.test(character) ? DIGIT : OTHER;
}

/** The class of the code point `code` (a lone surrogate is a code point of its own: OTHER). */
function classOf(code: number): RunClass {
  if (code > 0xffff) return classify(String.fromCodePoint(code));
  const known = bmpClasses[code]!;
  if (known !== 0) return (known - 1) as RunClass;
  const kind = classify(String.fromCharCode(code));
  bmpClasses[code] = kind + 1;
  return kind;
}

/** The token ids of `text`, special-token spellings treated as plain text. Only for bounded, trusted text. */
export function encodeText(text: string): number[] {
  return encode(text, NO_SPECIAL_TOKENS);
}

/** The text of token ids (the simulated provider cuts its answers at token boundaries). */
export function decodeTokens(tokens: readonly number[]): string {
  return decode(tokens);
}

/** The UTF-8 length of `text`, without allocating it (an upper bound of its byte-level BPE tokens). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    // A surrogate is half of a 4-byte character.
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code >= 0xd800 && code <= 0xdfff ? 2 : 3;
  }
  return bytes;
}

/**
 * The tokens of `text`: exact for ordinary text, an upper bound where it holds runs longer than
 * MAX_TOKENIZED_RUN. Linear in the length of `text`.
 */
export function countTextTokens(text: string): number {
  if (text === '') return 0;
  if (text.length <= MAX_TOKENIZED_RUN) return countTokens(text, NO_SPECIAL_TOKENS);
  let total = 0;
  // Where the text not yet counted starts, and the current run of one class (in code points).
  let from = 0;
  let runStart = 0;
  let runClass: RunClass | undefined;
  let runLength = 0;
  const closeRun = (end: number): void => {
    if (runClass === DIGIT || runLength <= MAX_TOKENIZED_RUN) return;
    if (runStart > from) total += countTokens(text.slice(from, runStart), NO_SPECIAL_TOKENS);
    total += utf8Length(text.slice(runStart, end));
    from = end;
  };
  for (let index = 0; index < text.length; ) {
    const code = text.codePointAt(index)!;
    const kind = classOf(code);
    if (kind !== runClass) {
      closeRun(index);
      runClass = kind;
      runStart = index;
      runLength = 0;
    }
    runLength += 1;
    index += code > 0xffff ? 2 : 1;
  }
  closeRun(text.length);
  if (from < text.length) total += from === 0 ? countTokens(text, NO_SPECIAL_TOKENS) : countTokens(text.slice(from), NO_SPECIAL_TOKENS);
  return total;
}

/**
 * Runs the tokenizer over some text of every class (words, numbers, punctuation, white space,
 * other scripts), for the gateway to call once at startup. Cold, the tokenizer builds its tables,
 * compiles its Unicode patterns and runs unoptimized: the first slice of a request took up to 90 ms,
 * held in one turn of the event loop, against a few milliseconds warm. About 70 ms, once.
 */
let warmedUp = false;

export function warmUpTokenizer(): void {
  // Once per process: the tokenizer's state is the module's, shared by every gateway in it.
  if (warmedUp) return;
  warmedUp = true;
  let seed = 1;
  const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const pieces = ['the', 'Gateway', ' ', '\n', '42', '3.14', '{"a": [1, 2]}', '¿Qué?', 'Grüße', 'добрый', '你好', 'こんにちは', 'مرحبا', '🙂', '<|endoftext|>'];
  for (let round = 0; round < 6; round += 1) {
    const words: string[] = [];
    for (let index = 0; index < 400; index += 1) {
      const letters = Array.from({ length: 2 + Math.floor(random() * 8) }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join('');
      words.push(random() < 0.2 ? pieces[Math.floor(random() * pieces.length)]! : letters);
    }
    countTextTokens(words.join(' '));
  }
}

/** Text tokenized exactly per request; the rest counts its UTF-8 bytes (≥ its tokens). */
export const EXACT_CHARACTERS = 64 * 1024;

/** What one remembered text costs beyond its characters (the map entry and string header), in characters. */
const MEMO_ENTRY_OVERHEAD = 32;
/** Up to this length V8 hashes a string's contents; a longer one hashes by its length alone. */
const FULLY_HASHED_LENGTH = 16_383;
/** Characters of a long text's fingerprint taken at its start, middle and end. */
const FINGERPRINT_SAMPLE = 128;

interface LongEntry {
  text: string;
  tokens: number;
}

interface Generation {
  /** Texts of up to FULLY_HASHED_LENGTH characters → their count. */
  short: Map<string, number>;
  /** Longer texts by fingerprint: one text per fingerprint, compared whole on a hit. */
  long: Map<string, LongEntry>;
  characters: number;
}

const newGeneration = (): Generation => ({ short: new Map(), long: new Map(), characters: 0 });

/**
 * Remembered exact counts of input texts (`countTextTokens`, so a remembered count is the same
 * number). Clients resend the same texts on every request: a coding agent its system prompt, its
 * tools and the whole conversation so far; the tokenizer costs about a microsecond for a word and
 * a millisecond for 40 KB, a lookup a hash of the text.
 *
 * Bounded by characters: two generations of at most `generationCharacters` each (a text costs its
 * length, its fingerprint's and MEMO_ENTRY_OVERHEAD). New texts go to the young one; a text found in the old one
 * moves to the young one; when the young one is full it becomes the old one and the old one is
 * dropped, so what is in use stays and the rest ages out without a per-hit reordering.
 *
 * Texts are stored as copies: a text sliced from a larger string would otherwise keep that whole
 * string alive. Texts longer than V8 hashes whole are keyed by a fingerprint (length and samples)
 * and compared in full on a hit, so that many long texts of one length cannot pile up in one hash
 * bucket.
 */
export class TokenMemo {
  readonly #generationCharacters: number;
  #young: Generation = newGeneration();
  #old: Generation = newGeneration();

  constructor(generationCharacters: number) {
    this.#generationCharacters = generationCharacters;
  }

  /** Characters remembered now (entries' overhead included): never above twice a generation. */
  get characters(): number {
    return this.#young.characters + this.#old.characters;
  }

  /** Whether the count of `text` is remembered. */
  has(text: string): boolean {
    const key = keyOf(text);
    return find(this.#young, text, key) !== undefined || find(this.#old, text, key) !== undefined;
  }

  /** `countTextTokens(text)`, remembered. */
  count(text: string): number {
    if (text === '') return 0;
    const key = keyOf(text);
    const young = find(this.#young, text, key);
    if (young !== undefined) return young;
    const tokens = find(this.#old, text, key) ?? countTextTokens(text);
    this.#remember(text, tokens, key);
    return tokens;
  }

  #remember(text: string, tokens: number, key: string | undefined): void {
    const cost = text.length + MEMO_ENTRY_OVERHEAD + (key?.length ?? 0);
    if (cost > this.#generationCharacters) return;
    if (this.#young.characters + cost > this.#generationCharacters) {
      this.#old = this.#young;
      this.#young = newGeneration();
    }
    const young = this.#young;
    const copy = copyOf(text);
    if (key === undefined) {
      young.short.set(copy, tokens);
    } else {
      const replaced = young.long.get(key);
      if (replaced !== undefined) young.characters -= replaced.text.length + MEMO_ENTRY_OVERHEAD + key.length;
      young.long.set(key, { text: copy, tokens });
    }
    young.characters += cost;
  }
}

/** The fingerprint of a text too long for V8 to hash whole; undefined for a shorter one (its own key). */
function keyOf(text: string): string | undefined {
  if (text.length <= FULLY_HASHED_LENGTH) return undefined;
  const middle = Math.floor((text.length - FINGERPRINT_SAMPLE) / 2);
  return `${text.length}:${text.slice(0, FINGERPRINT_SAMPLE)}${text.slice(middle, middle + FINGERPRINT_SAMPLE)}${text.slice(-FINGERPRINT_SAMPLE)}`;
}

function find(generation: Generation, text: string, key: string | undefined): number | undefined {
  if (key === undefined) return generation.short.get(text);
  const entry = generation.long.get(key);
  return entry !== undefined && entry.text === text ? entry.tokens : undefined;
}

/**
 * A string with its own storage. Slicing a concatenation makes V8 flatten it into a new string
 * first, and the slice then refers to that one, not to whatever `text` was sliced from.
 */
function copyOf(text: string): string {
  return ` ${text}`.slice(1);
}

/**
 * The memo of input counts (TokenBudget): about 8 MiB at most (two generations of 2 Mi characters,
 * each at most two bytes).
 */
export const inputTokenMemo = new TokenMemo(2 * 1024 * 1024);

/**
 * Counts the texts of one request in order: exactly for the first `exactCharacters`, by UTF-8 bytes
 * after that, so that counting a request of any size costs a bounded amount of tokenizer time.
 */
export class TokenBudget {
  private exactLeft: number;

  constructor(exactCharacters: number = EXACT_CHARACTERS) {
    this.exactLeft = exactCharacters;
  }

  count(text: string): number {
    if (text.length <= this.exactLeft) {
      this.exactLeft -= text.length;
      return inputTokenMemo.count(text);
    }
    const exact = this.exactLeft;
    this.exactLeft = 0;
    return exact === 0 ? utf8Length(text) : countTextTokens(text.slice(0, exact)) + utf8Length(text.slice(exact));
  }
}

/**
 * The texts of a canonical request in the order the upstream reads them (yielded), and the tokens
 * of its framing and images (returned): what both counts of the input add up, one way.
 */
function* inputTexts(request: CanonicalRequest): Generator<string, number> {
  let framing = TOKENS_PER_REPLY;
  if (request.instructions !== undefined && request.instructions !== '') {
    framing += TOKENS_PER_ITEM;
    yield request.instructions;
  }
  for (const item of request.input) {
    framing += TOKENS_PER_ITEM;
    switch (item.type) {
      case 'message':
        for (const part of item.content) {
          if (part.type === 'image') framing += TOKENS_PER_IMAGE;
          else yield part.type === 'text' ? part.text : part.refusal;
        }
        break;
      case 'function_call':
        yield item.name;
        yield item.arguments;
        break;
      case 'function_call_output':
        yield item.output;
        break;
    }
  }
  if (request.tools.length > 0) yield JSON.stringify(request.tools);
  return framing;
}

/**
 * The exact tokens of `texts` (`countTextTokens`, no budget), a slice at a time, yielding after
 * every YIELD_CHARACTERS for the driver to pause (lib/run-yielding.ts). What the whole-answer
 * endpoints bill when the upstream reports no usage.
 */
export function* countTexts(texts: Iterable<string>): Generator<void, number> {
  let total = 0;
  let sinceYield = 0;
  for (const text of texts) {
    for (const slice of slicesOf(text)) {
      total += countTextTokens(slice);
      sinceYield += slice.length;
      if (sinceYield >= YIELD_CHARACTERS) {
        sinceYield = 0;
        yield;
      }
    }
  }
  return total;
}

/**
 * An estimate of the input tokens of a canonical request, with the same framing as OpenAI's chat
 * format: for the simulated provider it is its exact input count. Holds are sized from the whole
 * client body instead (input-bound.ts), which covers every byte forwarded upstream.
 */
export function estimateInputTokens(request: CanonicalRequest, budget: TokenBudget = new TokenBudget()): number {
  const texts = inputTexts(request);
  let total = 0;
  for (;;) {
    const step = texts.next();
    if (step.done === true) return total + step.value;
    total += budget.count(step.value);
  }
}

/**
 * The input tokens of a canonical request as `estimateInputTokens` frames them, every text counted
 * (no budget: exact for ordinary text), a slice at a time, pausing (yielding nothing) after every
 * YIELD_CHARACTERS for its driver to let other requests run. What an answer is billed for its input
 * when its upstream reports no usage; linear in the request's size.
 */
export function* countInputTokens(request: CanonicalRequest): Generator<void, number> {
  const texts = inputTexts(request);
  let total = 0;
  let sinceYield = 0;
  for (;;) {
    const step = texts.next();
    if (step.done === true) return total + step.value;
    // A text of one slice is remembered whole (clients resend the same ones); the slices of a
    // longer one are not, or one long prompt would push every remembered text out of the memo.
    const whole = step.value.length <= YIELD_CHARACTERS;
    for (const slice of slicesOf(step.value)) {
      total += whole ? inputTokenMemo.count(slice) : countTextTokens(slice);
      sinceYield += slice.length;
      if (sinceYield >= YIELD_CHARACTERS) {
        sinceYield = 0;
        yield;
      }
    }
  }
}
