/**
 * The fast path of the one Chat chunk reader (`readChatChunk`, chat-wire.ts): a plain content
 * chunk, the kind almost every chunk of a stream is, read from its text by one fixed pattern
 * instead of `JSON.parse` and the schema. Plain: one choice (index 0, or none written), no finish
 * reason, a delta whose one read value is its `content` string (a `role`, and a null `refusal`,
 * `reasoning`, `reasoning_content` or `tool_calls`, may be there too), no usage, no error, no
 * `x_groq` object (Groq's, which may carry usage), one
 * top-level `model` string without escapes, and every other member a JSON leaf or a small object
 * of them (no arrays, no whitespace, no key with escapes, no other `model` key). Anything else is
 * parsed and read by the schema. The pattern is a constant, not learnt: nothing is kept between
 * chunks or streams. chat-chunk-text.test.ts holds it to the schema (docs/architecture.md,
 * "Streams").
 */
import { PLAIN_STRING_BODY as PLAIN_BODY, STRING_BODY as BODY, stringOfBody } from '../shared/json-string-text.js';

const NUMBER = String.raw`-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`;
const LEAF = `(?:"${BODY}"|${NUMBER}|true|false|null)`;

/** A key without escapes, other than `names` (always other than `model`: every `model` pair is renamed). */
function keyBut(...names: string[]): string {
  return `"(?!(?:${['model', ...names].join('|')})")${PLAIN_BODY}"`;
}

const ANY_KEY = keyBut();
/** An object of leaves, or of leaves and such objects (as Azure's `content_filter_results`). */
const SMALL_OBJECT_0 = String.raw`\{(?:${ANY_KEY}:${LEAF}(?:,${ANY_KEY}:${LEAF})*)?\}`;
const SMALL_VALUE = `(?:${LEAF}|${SMALL_OBJECT_0})`;
const SMALL_OBJECT = String.raw`\{(?:${ANY_KEY}:${SMALL_VALUE}(?:,${ANY_KEY}:${SMALL_VALUE})*)?\}`;
/** A member the reader does not read (or reads as absent). */
const VALUE = `(?:${LEAF}|${SMALL_OBJECT})`;

const DELTA_MEMBER = `(?:"(?:refusal|reasoning|reasoning_content|tool_calls)":null|${keyBut('content', 'refusal', 'reasoning', 'reasoning_content', 'tool_calls')}:${LEAF})`;
const DELTA = String.raw`\{(?:${DELTA_MEMBER},)*"content":"(${BODY})"(?:,${DELTA_MEMBER})*\}`;
const CHOICE_MEMBER = `(?:"index":(?:0|null)|"finish_reason":null|${keyBut('index', 'finish_reason', 'delta')}:${VALUE})`;
const CHOICES = String.raw`\[\{(?:${CHOICE_MEMBER},)*"delta":${DELTA}(?:,${CHOICE_MEMBER})*\}\]`;
const TOP_MEMBER = `(?:"(?:usage|error|x_groq)":null|${keyBut('choices', 'usage', 'error', 'x_groq')}:${VALUE})`;
const MODEL = `"model":"(${PLAIN_BODY})"`;

/**
 * Groups: the model and the content when the model comes first (1, 2), the content and the model
 * when the choices do (3, 4).
 */
const PLAIN_CHUNK = new RegExp(
  String.raw`^\{(?:(?:${TOP_MEMBER},)*${MODEL}(?:,${TOP_MEMBER})*,"choices":${CHOICES}|(?:${TOP_MEMBER},)*"choices":${CHOICES}(?:,${TOP_MEMBER})*,${MODEL})(?:,${TOP_MEMBER})*\}$`,
);

/** What a plain content chunk says. */
export interface PlainChunk {
  /** The content delta ('' for none). */
  content: string;
  /** The top-level model, as written (it has no escapes). */
  model: string;
  /** Where the model's text starts in the chunk. */
  modelAt: number;
}

/** What `text` says when it is a plain content chunk; undefined for any other (it is parsed then). */
export function readPlainChunk(text: string): PlainChunk | undefined {
  const match = PLAIN_CHUNK.exec(text);
  if (match === null) return undefined;
  const model = match[1] ?? match[4] ?? '';
  const content = stringOfBody(match[2] ?? match[3] ?? '');
  // The first `"model":"` is the one `model` key: a key has no escapes here, and a string value
  // cannot hold an unescaped quote.
  return { content, model, modelAt: text.indexOf('"model":"') + 9 };
}
