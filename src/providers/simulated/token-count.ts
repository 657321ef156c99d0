/**
 * Token slicing for the simulated provider's streamed text, with the real o200k_base tokenizer,
 * so that the deltas it streams add up to exactly the output tokens it reports. Counting itself
 * (input and text) is protocol/tokens.ts, the same the gateway uses to estimate holds.
 */
import { countTextTokens, decodeTokens, encodeText } from '../../protocol/tokens.js';

/**
 * The character offset at which the first `tokenCount` tokens of `tokens` (the encoding of `text`)
 * end, moved back to a place where `text` really splits: a token may end inside a multi-byte
 * character, and then the decoded prefix is not a prefix of `text`.
 */
function prefixEnd(text: string, tokens: number[], tokenCount: number): number {
  for (let count = tokenCount; count > 0; count--) {
    const prefix = decodeTokens(tokens.slice(0, count));
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
