/**
 * A JSON string read from its text without `JSON.parse` of what holds it: the patterns a fixed
 * reading of a stream event (providers/openai/chat-chunk-text.ts, Anthropic's text deltas in
 * providers/anthropic/messages-stream.ts) matches a string's body with, and the string a matched
 * body stands for.
 */

/** A string's body without escapes: no quote, backslash or control character. */
export const PLAIN_STRING_BODY = String.raw`[^"\\\u0000-\u001f]*`;
/** A JSON string's body: plain runs between valid escapes (the loop unrolled, for the engine). */
export const STRING_BODY = String.raw`${PLAIN_STRING_BODY}(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})${PLAIN_STRING_BODY})*`;

/** Below this length V8 copies a substring rather than slicing it out of its string. */
const SLICED_FROM = 13;

/**
 * The string a body matched by `STRING_BODY` stands for, as a string of its own: a longer slice of
 * the event's text would keep the whole event alive for as long as the usage meter keeps the text
 * (V8 copies the short ones, and most deltas are short).
 */
export function stringOfBody(body: string): string {
  return body.length < SLICED_FROM && !body.includes('\\') ? body : (JSON.parse(`"${body}"`) as string);
}
