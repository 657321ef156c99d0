/**
 * An upper bound of the input tokens an upstream can bill for a request, taken over the whole client
 * body: every key and string that may be forwarded counts (schemas, tools, unknown fields that a
 * pass-through forwards), images count by a per-image allowance instead of their bytes. The walk
 * is iterative (no depth can overflow the stack) and linear in the body's size: text beyond
 * EXACT_CHARACTERS per request (the same budget as the canonical estimate, tokens.ts) is bounded
 * by its UTF-8 bytes instead of tokenized, so an 8 MiB body costs milliseconds, and the walk
 * pauses every YIELD_CHARACTERS so that the caller can let
 * other requests run in between (see http/v1/answer.ts).
 *
 * Images: an object whose `type` names an image (`image_url`, `input_image`, `image`) or whose
 * MIME type field starts with `image/` (Gemini `inline_data`, Anthropic `source`) is one image,
 * whatever it holds; a lone `data:image/…` string too.
 */
import { slicesOf, YIELD_CHARACTERS } from './text-slices.js';
import { EXACT_CHARACTERS, TokenBudget } from './tokens.js';

/** Tokens every key, value and array element may cost in the upstream's own framing. */
const STRUCTURE_TOKENS = 2;

const IMAGE_TYPES = new Set(['image_url', 'input_image', 'image']);
const MIME_FIELDS = ['mime_type', 'mimeType', 'media_type'] as const;

export interface InputBoundOptions {
  /** The most tokens one image can cost on any target of the model. */
  imageTokens: number;
  exactCharacters?: number;
}

function isImage(value: Record<string, unknown>): boolean {
  if (typeof value.type === 'string' && IMAGE_TYPES.has(value.type)) return true;
  return MIME_FIELDS.some((field) => {
    const mime = value[field];
    return typeof mime === 'string' && mime.startsWith('image/');
  });
}

/**
 * Walks `body` and returns the bound; yields (nothing) every YIELD_CHARACTERS of text, for the
 * caller to pause. Drive it with `boundInputTokens` (sync) or a scheduler that yields in between.
 */
export function* walkInputBound(body: unknown, options: InputBoundOptions): Generator<void, number> {
  const budget = new TokenBudget(options.exactCharacters ?? EXACT_CHARACTERS);
  let sinceYield = 0;
  let total = 0;
  // Visited in document order (children pushed in reverse), so the text counted exactly is the
  // same the canonical estimate counts exactly: the beginning of the request.
  const stack: unknown[] = [body];
  const countText = (text: string): number => {
    sinceYield += text.length;
    return budget.count(text);
  };
  while (stack.length > 0) {
    const value = stack.pop();
    total += STRUCTURE_TOKENS;
    if (typeof value === 'string') {
      if (value.startsWith('data:image/')) {
        total += options.imageTokens;
      } else {
        // A long text is counted a slice at a time, with a pause after each one.
        for (const slice of slicesOf(value)) {
          total += countText(slice);
          if (sinceYield >= YIELD_CHARACTERS) {
            sinceYield = 0;
            yield;
          }
        }
      }
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) stack.push(value[index]);
    } else if (typeof value === 'object' && value !== null) {
      const record = value as Record<string, unknown>;
      if (isImage(record)) {
        total += options.imageTokens;
        continue;
      }
      const keys = Object.keys(record);
      for (const key of keys) total += STRUCTURE_TOKENS + countText(key);
      for (let index = keys.length - 1; index >= 0; index -= 1) stack.push(record[keys[index]!]);
    }
    if (sinceYield >= YIELD_CHARACTERS) {
      sinceYield = 0;
      yield;
    }
  }
  return total;
}

/** The bound, computed in one go (for tests and small bodies). */
export function boundInputTokens(body: unknown, options: InputBoundOptions): number {
  const walk = walkInputBound(body, options);
  for (;;) {
    const step = walk.next();
    if (step.done === true) return step.value;
  }
}
