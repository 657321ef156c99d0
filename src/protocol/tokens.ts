/**
 * Token counting with the real tokenizer (gpt-tokenizer, o200k_base), bounded so that no input can
 * make it slow. The one place that calls the tokenizer, so that client text containing special-token
 * markers such as `<|endoftext|>` is counted as plain text instead of throwing.
 *
 * BPE is quadratic in the length of one pre-token (262,144 letters "a" took 25 s of CPU), so a run of
 * more than MAX_TOKENIZED_RUN characters of one class (letters, punctuation, white space) is not
 * tokenized: it is bounded by its UTF-8 byte count instead, which no byte-level BPE can exceed (every
 * token stands for at least one byte). What is left between such runs tokenizes in linear time.
 */
import { countTokens, encode } from 'gpt-tokenizer';
import type { CanonicalRequest, ContentPart, InputItem } from './canonical.js';

const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/** Framing tokens OpenAI adds around each message, and once to prime the reply. */
const TOKENS_PER_ITEM = 4;
const TOKENS_PER_REPLY = 3;
/** A flat allowance for an image (a high-detail 512px tile set); images are billed by the upstream. */
export const TOKENS_PER_IMAGE = 765;

/** Longest run of one character class that is tokenized; longer runs count their UTF-8 bytes. */
export const MAX_TOKENIZED_RUN = 64;
/** Digits are left out: o200k splits them into groups of at most three, which stays linear. */
const LONG_RUN = new RegExp(
  `[\\p{L}\\p{M}]{${MAX_TOKENIZED_RUN + 1},}|[^\\s\\p{L}\\p{M}\\p{N}]{${MAX_TOKENIZED_RUN + 1},}|\\s{${MAX_TOKENIZED_RUN + 1},}`,
  'gu',
);

/** The token ids of `text`, special-token spellings treated as plain text. Only for bounded, trusted text. */
export function encodeText(text: string): number[] {
  return encode(text, NO_SPECIAL_TOKENS);
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
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    if (run.index > from) total += countTokens(text.slice(from, run.index), NO_SPECIAL_TOKENS);
    total += utf8Length(run[0]);
    from = run.index + run[0].length;
  }
  if (from < text.length) total += from === 0 ? countTokens(text, NO_SPECIAL_TOKENS) : countTokens(text.slice(from), NO_SPECIAL_TOKENS);
  return total;
}

/** Text tokenized exactly per request; the rest counts its UTF-8 bytes (≥ its tokens). */
export const EXACT_CHARACTERS = 64 * 1024;

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
      return countTextTokens(text);
    }
    const exact = this.exactLeft;
    this.exactLeft = 0;
    return exact === 0 ? utf8Length(text) : countTextTokens(text.slice(0, exact)) + utf8Length(text.slice(exact));
  }
}

function partTokens(part: ContentPart, budget: TokenBudget): number {
  switch (part.type) {
    case 'text':
      return budget.count(part.text);
    case 'refusal':
      return budget.count(part.refusal);
    case 'image':
      return TOKENS_PER_IMAGE;
  }
}

function itemTokens(item: InputItem, budget: TokenBudget): number {
  switch (item.type) {
    case 'message':
      return TOKENS_PER_ITEM + item.content.reduce((sum, part) => sum + partTokens(part, budget), 0);
    case 'function_call':
      return TOKENS_PER_ITEM + budget.count(item.name) + budget.count(item.arguments);
    case 'function_call_output':
      return TOKENS_PER_ITEM + budget.count(item.output);
  }
}

/**
 * An estimate of the input tokens of a canonical request, with the same framing as OpenAI's chat
 * format: for the simulated provider it is its exact input count. Holds are sized from the whole
 * client body instead (input-bound.ts), which covers every byte forwarded upstream.
 */
export function estimateInputTokens(request: CanonicalRequest, budget: TokenBudget = new TokenBudget()): number {
  let total = TOKENS_PER_REPLY;
  if (request.instructions !== undefined && request.instructions !== '') total += TOKENS_PER_ITEM + budget.count(request.instructions);
  for (const item of request.input) total += itemTokens(item, budget);
  if (request.tools.length > 0) total += budget.count(JSON.stringify(request.tools));
  return total;
}
