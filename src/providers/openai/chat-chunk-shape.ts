/**
 * Reading a streamed Chat chunk without parsing it, when it has the shape of the chunks before it.
 *
 * Almost every chunk of a Chat stream is a content delta shaped exactly like the one before it:
 * the same keys in the same order, the same `index`, `finish_reason: null`, `usage: null`; only
 * the content and a few strings the gateway does not read (`id`, `obfuscation`, ...) differ. A
 * shape is learnt from a chunk the gateway parsed and found plain (its one canonical event, if
 * any, is its content), and is a pattern of that chunk's very text in which only those strings and
 * top-level numbers are left open. A chunk that matches it parses to the same JSON but for those
 * values (keys, nesting, whitespace and every other value are the learnt chunk's own), so it
 * carries the same canonical events but for its content: reading it takes one pattern match
 * instead of `JSON.parse` and the chunk schema. Anything else (the finish chunk, usage, tool
 * calls, reasoning, an error, another layout) does not match and is parsed as before
 * (docs/wire-protocols.md §1.3).
 */
import { isRecord } from '../../lib/json-value.js';
import type { CanonicalEvent } from '../../protocol/canonical.js';

/** What a chunk of a known shape says: its content, and the `model` it names as written. */
export interface PlainChunk {
  /** The content delta ('' for none). */
  content: string;
  /** The model the chunk names, as its JSON text writes it (escapes included). */
  modelText: string;
  /** Where that text starts in the chunk. */
  modelAt: number;
}

/** A JSON string's body: no quote, backslash or control character unescaped, only valid escapes. */
const STRING_BODY = String.raw`(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*`;
const NUMBER = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`;
/** Below this length V8 copies a substring rather than slicing it out of its string. */
const SLICED_FROM = 13;
/** Top-level keys whose values the chunk reader reads: kept as they are in the pattern. */
const READ_KEYS = new Set(['choices', 'usage', 'error']);

/**
 * The shapes learnt so far, most recently used first: the few layouts the upstreams in use send.
 * Shared by every stream, so that a stream reads even its first chunks without parsing them, and
 * a shape is built once per layout, not once per stream.
 */
const KNOWN: ChunkShape[] = [];
const MAX_KNOWN = 8;

export class ChunkShape {
  readonly #source: string;
  readonly #pattern: RegExp;
  /** The group of the content's text, and of the model's. */
  readonly #contentGroup: number;
  readonly #modelGroup: number;
  /** The text before the model's value: `"model":"` as the learnt chunk wrote it. */
  readonly #modelKey: string;

  private constructor({ source, contentGroup, modelGroup, modelKey }: BuiltPattern) {
    this.#source = source;
    this.#pattern = new RegExp(source);
    this.#contentGroup = contentGroup;
    this.#modelGroup = modelGroup;
    this.#modelKey = modelKey;
  }

  /**
   * Learns the shape of `text`, the chunk `value` was parsed from and the chunk reader read
   * `events` from, and keeps it among the known ones. Undefined unless it is a plain content
   * chunk: one choice, whose content's text delta is its one canonical event (none for empty
   * content), and a top-level `model`.
   */
  static learn(text: string, value: unknown, events: readonly CanonicalEvent[]): ChunkShape | undefined {
    if (!isRecord(value) || typeof value.model !== 'string' || !Array.isArray(value.choices) || value.choices.length !== 1) return undefined;
    const choice: unknown = value.choices[0];
    const delta = isRecord(choice) ? choice.delta : undefined;
    if (!isRecord(delta) || typeof delta.content !== 'string') return undefined;
    const [first] = events;
    const plain = delta.content === '' ? events.length === 0 : events.length === 1 && first?.type === 'text-delta' && first.delta === delta.content;
    if (!plain) return undefined;
    const built = buildPattern(text);
    if (built === undefined) return undefined;
    const known = KNOWN.find((shape) => shape.#source === built.source);
    if (known !== undefined) return known;
    const shape = new ChunkShape(built);
    KNOWN.unshift(shape);
    if (KNOWN.length > MAX_KNOWN) KNOWN.pop();
    return shape;
  }

  /** A known shape `data` has (other than `tried`), with what it says; undefined when none fits. */
  static find(data: string, tried: ChunkShape | undefined): { shape: ChunkShape; plain: PlainChunk } | undefined {
    for (let index = 0; index < KNOWN.length; index += 1) {
      const shape = KNOWN[index];
      if (shape === undefined || shape === tried) continue;
      const plain = shape.read(data);
      if (plain === undefined) continue;
      if (index > 0) {
        KNOWN.splice(index, 1);
        KNOWN.unshift(shape);
      }
      return { shape, plain };
    }
    return undefined;
  }

  /** What `data` says, when it has this shape; undefined when it does not (it is parsed then). */
  read(data: string): PlainChunk | undefined {
    const match = this.#pattern.exec(data);
    if (match === null) return undefined;
    const contentText = match[this.#contentGroup] ?? '';
    // The text between the quotes is a JSON string's body. Read as one, the content is a string of
    // its own: a longer match is a slice that would keep the whole chunk's text alive for as long
    // as the usage meter keeps the content (V8 copies the short ones, and most deltas are short).
    const content = contentText.length < SLICED_FROM && !contentText.includes('\\') ? contentText : (JSON.parse(`"${contentText}"`) as string);
    const modelText = match[this.#modelGroup] ?? '';
    // The first `"model":"` in a chunk of this shape is its one `model` key: a string value
    // cannot hold an unescaped quote.
    return { content, modelText, modelAt: data.indexOf(this.#modelKey) + this.#modelKey.length };
  }
}

interface BuiltPattern {
  source: string;
  contentGroup: number;
  modelGroup: number;
  modelKey: string;
}

/** One open object or array while the chunk's text is walked. */
interface Container {
  array: boolean;
  /** The path from the chunk's root, e.g. `choices.0.delta`. */
  path: string;
  /** Objects: the key whose value comes next (undefined while a key is expected). */
  key: string | undefined;
  /** Arrays: the index of the next element. */
  index: number;
}

/**
 * Walks valid JSON text and writes the pattern: every character literal, but for the open values
 * (top-level strings and numbers the reader ignores, the delta's `role`) and the two read ones
 * (the content, the top-level `model`). Undefined when the text has no content or model where a
 * plain chunk has them, or a `model` key elsewhere (every `model` pair is renamed).
 */
function buildPattern(text: string): BuiltPattern | undefined {
  let source = '^';
  let groups = 0;
  let contentGroup = 0;
  let modelGroup = 0;
  let modelKey: string | undefined;
  const stack: Container[] = [];
  let position = 0;
  while (position < text.length) {
    const code = text.charCodeAt(position);
    const top = stack.at(-1);
    if (code === 0x22) {
      const end = stringEnd(text, position);
      const token = text.slice(position, end);
      if (top !== undefined && !top.array && top.key === undefined) {
        // A key: its value follows the colon.
        top.key = JSON.parse(token) as string;
        if (top.key === 'model') {
          // Renaming reads the one top-level `model`; a chunk with another is parsed.
          if (top.path !== '' || modelKey !== undefined) return undefined;
          const colon = text.indexOf(':', end);
          const valueAt = text.indexOf('"', colon);
          if (valueAt === -1) return undefined;
          modelKey = text.slice(position, valueAt + 1);
        }
        source += escapeLiteral(token);
      } else {
        const path = valuePath(top);
        if (path === 'model') {
          groups += 1;
          modelGroup = groups;
          source += `"(${STRING_BODY})"`;
        } else if (path === 'choices.0.delta.content') {
          if (contentGroup !== 0) return undefined;
          groups += 1;
          contentGroup = groups;
          source += `"(${STRING_BODY})"`;
        } else if ((top !== undefined && top.path === '' && !READ_KEYS.has(path)) || path === 'choices.0.delta.role') {
          source += `"${STRING_BODY}"`;
        } else {
          source += escapeLiteral(token);
        }
        valueDone(top);
      }
      position = end;
    } else if (code === 0x7b || code === 0x5b) {
      stack.push({ array: code === 0x5b, path: valuePath(top), key: undefined, index: 0 });
      source += code === 0x7b ? '\\{' : '\\[';
      position += 1;
    } else if (code === 0x7d || code === 0x5d) {
      stack.pop();
      valueDone(stack.at(-1));
      source += code === 0x7d ? '\\}' : '\\]';
      position += 1;
    } else if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
      let end = position + 1;
      while (end < text.length && /[0-9.eE+-]/.test(text.charAt(end))) end += 1;
      source += top !== undefined && top.path === '' ? NUMBER : escapeLiteral(text.slice(position, end));
      valueDone(top);
      position = end;
    } else if (code === 0x74 || code === 0x66 || code === 0x6e) {
      // true, false, null
      const end = position + (code === 0x66 ? 5 : 4);
      source += text.slice(position, end);
      valueDone(top);
      position = end;
    } else {
      // Whitespace, colons and commas, as they are.
      source += escapeLiteral(text.charAt(position));
      position += 1;
    }
  }
  if (contentGroup === 0 || modelGroup === 0 || modelKey === undefined) return undefined;
  return { source: `${source}$`, contentGroup, modelGroup, modelKey };
}

/** The path of the value that comes next in `container` (the root's path is ''). */
function valuePath(container: Container | undefined): string {
  if (container === undefined) return '';
  const step = container.array ? String(container.index) : (container.key ?? '');
  return container.path === '' ? step : `${container.path}.${step}`;
}

function valueDone(container: Container | undefined): void {
  if (container === undefined) return;
  if (container.array) container.index += 1;
  else container.key = undefined;
}

/** The index just past the JSON string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  let position = start + 1;
  for (;;) {
    const quote = text.indexOf('"', position);
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    position = quote + 1;
  }
}

function escapeLiteral(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
