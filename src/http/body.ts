/**
 * Request bodies: every body is read as text (whatever its content type, as OpenAI does) and parsed
 * here, after the key and rate-limit checks, so that the spec's check order holds.
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * The deepest nesting of objects and arrays a request body may have (the body itself is level 1).
 * Generous for real JSON schemas (a tool's parameters start at level 5 and each nested schema
 * takes two levels), and the one bound every walk over client data relies on: with it, the
 * recursive code downstream (JSON.stringify of tools and schemas, schema conversions, the stored
 * response copy) stays far from the stack limit, whatever the client sends.
 */
export const MAX_JSON_DEPTH = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export function registerBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
}

/**
 * The parsed JSON of a raw body, or the spec's 400 for malformed JSON (an empty body included),
 * or a 400 `json_too_deep` for a body nested deeper than MAX_JSON_DEPTH. The depth is checked on
 * the text before parsing, so that no parser or walker ever sees the deep value.
 */
export function parseJsonBody(raw: unknown): unknown {
  if (typeof raw !== 'string' || raw.trim() === '') throw new GatewayError('invalid_json');
  if (nestingExceeds(raw, MAX_JSON_DEPTH)) {
    throw new GatewayError('json_too_deep', { message: `Invalid request: JSON nested deeper than ${MAX_JSON_DEPTH} levels.` });
  }
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    // SyntaxError, and also a RangeError should V8 ever run out of stack on a value within the limit.
    throw new GatewayError('invalid_json');
  }
}

/**
 * Whether `text` opens more than `limit` objects or arrays at once, in one linear pass without
 * recursion. Brackets inside strings do not count. On malformed text the count may be off, which is
 * harmless: such text is refused either way (as too deep here, or as malformed by JSON.parse).
 */
export function nestingExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let index = 0;
  const length = text.length;
  while (index < length) {
    const char = text.charCodeAt(index);
    if (char === QUOTE) {
      index = endOfString(text, index + 1);
      continue;
    }
    if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      depth += 1;
      if (depth > limit) return true;
    } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) {
      depth -= 1;
    }
    index += 1;
  }
  return false;
}

/** The index just past the quote closing the string whose content starts at `start` (or the end). */
function endOfString(text: string, start: number): number {
  let index = start;
  for (;;) {
    const quote = text.indexOf('"', index);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (quote - 1 - backslashes >= start && text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    index = quote + 1;
  }
}
