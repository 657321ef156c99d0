/**
 * Token arithmetic for the simulated provider, with the real o200k_base tokenizer (gpt-tokenizer's
 * default export), so the usage it reports is what a real upstream of the GPT-4o/GPT-5 family
 * would count for the same text.
 */
import { decode, encode } from 'gpt-tokenizer';
import type { CanonicalRequest, ContentPart, InputItem } from '../../protocol/canonical.js';

/**
 * Client text that happens to spell a special token (`<|endoftext|>`) is ordinary text to an
 * upstream, and gpt-tokenizer would throw on it by default.
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Tokens each input item (and the instructions) costs on top of its text: the chat format's
 * `<|im_start|>role<|im_sep|> … <|im_end|>` wrapper, as in OpenAI's published counting recipe.
 */
export const ITEM_FRAMING_TOKENS = 3;
/** Tokens that prime the model's reply (`<|im_start|>assistant<|im_sep|>`), counted once. */
export const REPLY_PRIMING_TOKENS = 3;
/**
 * An image is not fetched; it costs a fixed amount, OpenAI's base price of one low-detail image.
 */
export const IMAGE_TOKENS = 85;

/** The token ids of `text` (o200k_base), special-token spellings treated as plain text. */
export function encodeText(text: string): number[] {
  return encode(text, PLAIN_TEXT);
}

/** How many o200k_base tokens `text` is. */
export function countTextTokens(text: string): number {
  return text === '' ? 0 : encodeText(text).length;
}

function countContentPartTokens(part: ContentPart): number {
  switch (part.type) {
    case 'text':
      return countTextTokens(part.text);
    case 'refusal':
      return countTextTokens(part.refusal);
    case 'image':
      return IMAGE_TOKENS;
  }
}

function countItemTokens(item: InputItem): number {
  switch (item.type) {
    case 'message':
      return item.content.reduce((sum, part) => sum + countContentPartTokens(part), 0);
    case 'function_call':
      return countTextTokens(item.name) + countTextTokens(item.arguments);
    case 'function_call_output':
      return countTextTokens(item.output);
  }
}

/**
 * Input tokens of a request as the simulated upstream bills them: the instructions and every input
 * item's text, arguments and outputs, plus {@link ITEM_FRAMING_TOKENS} per item (instructions count
 * as one item when present) and {@link REPLY_PRIMING_TOKENS} once. Tool definitions are not counted.
 */
export function countInputTokens(request: CanonicalRequest): number {
  let total = REPLY_PRIMING_TOKENS;
  if (request.instructions !== undefined && request.instructions !== '') {
    total += ITEM_FRAMING_TOKENS + countTextTokens(request.instructions);
  }
  for (const item of request.input) total += ITEM_FRAMING_TOKENS + countItemTokens(item);
  return total;
}

/**
 * The character offset at which the first `tokenCount` tokens of `tokens` (the encoding of `text`)
 * end, moved back to a place where `text` really splits: a token may end inside a multi-byte
 * character, and then the decoded prefix is not a prefix of `text`.
 */
function prefixEnd(text: string, tokens: number[], tokenCount: number): number {
  for (let count = tokenCount; count > 0; count--) {
    const prefix = decode(tokens.slice(0, count));
    if (text.startsWith(prefix)) return prefix.length;
  }
  return 0;
}

/**
 * Splits `text` into consecutive pieces of about `tokensPerChunk` tokens each. The pieces always
 * concatenate to exactly `text` (never a broken character), so counting the streamed deltas
 * gives the same number as counting the whole text.
 */
export function splitIntoTokenChunks(text: string, tokensPerChunk: number): string[] {
  const tokens = encodeText(text);
  const step = Math.max(1, Math.floor(tokensPerChunk));
  const chunks: string[] = [];
  let offset = 0;
  for (let tokenCount = step; tokenCount < tokens.length; tokenCount += step) {
    const end = prefixEnd(text, tokens, tokenCount);
    if (end > offset) {
      chunks.push(text.slice(offset, end));
      offset = end;
    }
  }
  if (offset < text.length) chunks.push(text.slice(offset));
  return chunks;
}

/** Splits `text` into at most `pieceCount` pieces of roughly equal token counts (same guarantees). */
export function splitIntoPieces(text: string, pieceCount: number): string[] {
  const tokenCount = encodeText(text).length;
  return splitIntoTokenChunks(text, Math.ceil(tokenCount / Math.max(1, pieceCount)));
}

/** A text cut to a token budget. */
export interface TruncatedText {
  text: string;
  /** Its token count (≤ the budget). */
  tokens: number;
  /** Whether anything was cut off. */
  truncated: boolean;
}

/**
 * The longest prefix of `text` that is at most `maxTokens` tokens, cut at a token boundary. The
 * returned count is of the returned text itself, so it matches what a client counting the deltas
 * would find.
 */
export function truncateToTokens(text: string, maxTokens: number): TruncatedText {
  const budget = Math.max(0, Math.floor(maxTokens));
  const tokens = encodeText(text);
  if (tokens.length <= budget) return { text, tokens: tokens.length, truncated: false };
  // Re-encoding a cut prefix can in rare cases merge differently; step back until it fits.
  for (let count = budget; count > 0; count--) {
    const prefix = text.slice(0, prefixEnd(text, tokens, count));
    const prefixTokens = countTextTokens(prefix);
    if (prefixTokens <= budget) return { text: prefix, tokens: prefixTokens, truncated: true };
  }
  return { text: '', tokens: 0, truncated: true };
}
