/**
 * Token counting with the real tokenizer (gpt-tokenizer, o200k_base). The one place that calls it,
 * so that client text containing special-token markers such as `<|endoftext|>` is counted as plain
 * text instead of throwing.
 */
import { countTokens, encode } from 'gpt-tokenizer';
import type { CanonicalRequest, ContentPart, InputItem } from './canonical.js';

const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/** Framing tokens OpenAI adds around each message, and once to prime the reply. */
const TOKENS_PER_ITEM = 4;
const TOKENS_PER_REPLY = 3;
/** A flat allowance for an image (a high-detail 512px tile set); images are billed by the upstream. */
const TOKENS_PER_IMAGE = 765;

/** The token ids of `text`, special-token spellings treated as plain text. */
export function encodeText(text: string): number[] {
  return encode(text, NO_SPECIAL_TOKENS);
}

export function countTextTokens(text: string): number {
  return text === '' ? 0 : countTokens(text, NO_SPECIAL_TOKENS);
}

function partTokens(part: ContentPart): number {
  switch (part.type) {
    case 'text':
      return countTextTokens(part.text);
    case 'refusal':
      return countTextTokens(part.refusal);
    case 'image':
      return TOKENS_PER_IMAGE;
  }
}

function itemTokens(item: InputItem): number {
  switch (item.type) {
    case 'message':
      return TOKENS_PER_ITEM + item.content.reduce((sum, part) => sum + partTokens(part), 0);
    case 'function_call':
      return TOKENS_PER_ITEM + countTextTokens(item.name) + countTextTokens(item.arguments);
    case 'function_call_output':
      return TOKENS_PER_ITEM + countTextTokens(item.output);
  }
}

/**
 * An estimate of the input tokens of a request, made before calling the upstream, to size the
 * hold and the token rate limit. It counts the same framing as OpenAI's chat format, so for the
 * simulated provider it is exact and for real upstreams it is close.
 */
export function estimateInputTokens(request: CanonicalRequest): number {
  let total = TOKENS_PER_REPLY;
  if (request.instructions !== undefined && request.instructions !== '') total += TOKENS_PER_ITEM + countTextTokens(request.instructions);
  for (const item of request.input) total += itemTokens(item);
  if (request.tools.length > 0) total += countTextTokens(JSON.stringify(request.tools));
  return total;
}
