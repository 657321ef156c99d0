/**
 * Arguments for a simulated tool call, generated from the tool's JSON Schema `parameters`, so the
 * client gets JSON of the shape it declared: strings from the user's words, numbers 1 (moved into
 * `minimum`/`maximum`), booleans true, enums and consts their first value, nested objects with their
 * required properties, arrays with the fewest items allowed (at least one).
 *
 * The schema comes from the client, so it is read as `unknown` and anything unexpected falls back
 * to a plain string rather than failing the request.
 */

/** Deeper than this (a recursive `$ref`), objects and arrays are generated empty. */
const MAX_DEPTH = 8;
/**
 * Values one generation may produce. The schema is the client's: `minItems: 1e9`, or a few
 * definitions that each use the next twice, would otherwise ask for billions of values and freeze
 * the instance. The arguments are cut to the output budget anyway, which this exceeds by far.
 */
const MAX_VALUES = 10_000;
/** Words per generated string. */
const WORDS_PER_STRING = 3;
const FALLBACK_WORD = 'simulated';

type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
type Schema = Record<string, unknown>;

function isRecord(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Values copied from `enum`/`const`/`default` are client data; keep only what JSON can carry. */
function toJsonValue(value: unknown): JsonValue | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (Array.isArray(value)) return value.map((item) => toJsonValue(item) ?? null);
  if (isRecord(value)) {
    const result: { [key: string]: JsonValue } = {};
    for (const [key, item] of Object.entries(value)) {
      const converted = toJsonValue(item);
      if (converted !== undefined) result[key] = converted;
    }
    return result;
  }
  return undefined;
}

function numberField(schema: Schema, key: string): number | undefined {
  const value = schema[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

class ArgumentGenerator {
  private wordCursor = 0;
  private valuesLeft = MAX_VALUES;

  constructor(
    private readonly root: Schema,
    private readonly words: readonly string[],
  ) {}

  /** Follows a local `$ref` (`#/$defs/Name`, `#/definitions/Name`, `#`); others are ignored. */
  private resolve(schema: Schema): Schema {
    let current = schema;
    for (let hops = 0; hops < MAX_DEPTH && typeof current.$ref === 'string'; hops++) {
      const reference = current.$ref;
      if (!reference.startsWith('#')) return {};
      let target: unknown = this.root;
      for (const segment of reference.slice(1).split('/').filter((part) => part !== '')) {
        const key = decodeURIComponent(segment).replaceAll('~1', '/').replaceAll('~0', '~');
        target = isRecord(target) ? target[key] : undefined;
      }
      if (!isRecord(target)) return {};
      current = target;
    }
    return current;
  }

  private nextWords(): string {
    if (this.words.length === 0) return FALLBACK_WORD;
    const picked: string[] = [];
    for (let index = 0; index < Math.min(WORDS_PER_STRING, this.words.length); index++) {
      picked.push(this.words[(this.wordCursor + index) % this.words.length] ?? FALLBACK_WORD);
    }
    this.wordCursor = (this.wordCursor + WORDS_PER_STRING) % this.words.length;
    return picked.join(' ');
  }

  private string(schema: Schema): string {
    switch (schema.format) {
      case 'date-time':
        return '2025-01-01T00:00:00Z';
      case 'date':
        return '2025-01-01';
      case 'time':
        return '00:00:00Z';
      case 'email':
        return 'user@example.com';
      case 'uri':
      case 'url':
        return 'https://example.com/';
      case 'uuid':
        return '00000000-0000-4000-8000-000000000000';
    }
    let text = this.nextWords();
    const minLength = numberField(schema, 'minLength');
    const maxLength = numberField(schema, 'maxLength');
    if (minLength !== undefined && text.length < minLength) text = text.padEnd(Math.ceil(minLength), 'x');
    if (maxLength !== undefined && text.length > maxLength) text = text.slice(0, Math.max(0, Math.floor(maxLength)));
    return text;
  }

  private number(schema: Schema, integer: boolean): number {
    let value = 1;
    const minimum = numberField(schema, 'minimum');
    const exclusiveMinimum = numberField(schema, 'exclusiveMinimum');
    const maximum = numberField(schema, 'maximum');
    const exclusiveMaximum = numberField(schema, 'exclusiveMaximum');
    if (minimum !== undefined && value < minimum) value = minimum;
    if (exclusiveMinimum !== undefined && value <= exclusiveMinimum) value = exclusiveMinimum + 1;
    if (maximum !== undefined && value > maximum) value = maximum;
    if (exclusiveMaximum !== undefined && value >= exclusiveMaximum) value = exclusiveMaximum - 1;
    return integer ? Math.ceil(value) : value;
  }

  private object(schema: Schema, depth: number, allProperties: boolean): { [key: string]: JsonValue } {
    const result: { [key: string]: JsonValue } = {};
    if (depth >= MAX_DEPTH) return result;
    const properties = isRecord(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : []);
    for (const [key, propertySchema] of Object.entries(properties)) {
      if (this.valuesLeft <= 0) break;
      if (allProperties || required.has(key)) result[key] = this.value(propertySchema, depth + 1);
    }
    // A required name with no schema of its own still has to be present.
    for (const key of required) if (this.valuesLeft > 0 && !(key in result)) result[key] = this.nextWords();
    return result;
  }

  private array(schema: Schema, depth: number): JsonValue[] {
    if (depth >= MAX_DEPTH) return [];
    const minItems = numberField(schema, 'minItems') ?? 0;
    const maxItems = numberField(schema, 'maxItems');
    let count = Math.max(1, Math.ceil(minItems));
    if (maxItems !== undefined) count = Math.min(count, Math.max(0, Math.floor(maxItems)));
    const prefixItems = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    const items: JsonValue[] = [];
    for (let index = 0; index < count && this.valuesLeft > 0; index++) {
      items.push(this.value(prefixItems[index] ?? schema.items ?? {}, depth + 1));
    }
    return items;
  }

  /**
   * The value for one schema. `depth` 0 is the top level, where every property is filled in;
   * `indirection` counts `anyOf`/`allOf` steps that do not descend, so a cycle of them ends.
   */
  value(rawSchema: unknown, depth: number, indirection = 0): JsonValue {
    this.valuesLeft -= 1;
    if (rawSchema === true || !isRecord(rawSchema) || indirection > MAX_DEPTH) return this.nextWords();
    const schema = this.resolve(rawSchema);
    if ('const' in schema) return toJsonValue(schema.const) ?? null;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return toJsonValue(schema.enum[0]) ?? null;
    for (const key of ['anyOf', 'oneOf'] as const) {
      const branches = schema[key];
      if (Array.isArray(branches) && branches.length > 0) {
        // Prefer a branch that is not `null`: a nullable field still gets a useful value.
        const branch = branches.find((candidate) => !(isRecord(candidate) && candidate.type === 'null')) ?? branches[0];
        return this.value(branch, depth, indirection + 1);
      }
    }
    if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
      return this.value(mergeAllOf(schema, (part) => (isRecord(part) ? this.resolve(part) : {})), depth, indirection + 1);
    }
    switch (schemaType(schema)) {
      case 'object':
        return this.object(schema, depth, depth === 0);
      case 'array':
        return this.array(schema, depth);
      case 'integer':
        return this.number(schema, true);
      case 'number':
        return this.number(schema, false);
      case 'boolean':
        return true;
      case 'null':
        return null;
      default:
        return this.string(schema);
    }
  }
}

/** The schema's type: the first non-null one of a type list, else guessed from its keywords. */
function schemaType(schema: Schema): string {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) {
    const named = type.filter((entry): entry is string => typeof entry === 'string');
    return named.find((entry) => entry !== 'null') ?? named[0] ?? 'string';
  }
  if ('properties' in schema || 'required' in schema) return 'object';
  if ('items' in schema || 'prefixItems' in schema) return 'array';
  return 'string';
}

/** `allOf` of object parts becomes one object schema with their properties and required names joined. */
function mergeAllOf(schema: Schema, resolve: (part: unknown) => Schema): Schema {
  const parts = [schema, ...(Array.isArray(schema.allOf) ? schema.allOf.map(resolve) : [])];
  const properties: Schema = {};
  const required: unknown[] = [];
  let type: unknown;
  for (const part of parts) {
    if (isRecord(part.properties)) Object.assign(properties, part.properties);
    if (Array.isArray(part.required)) required.push(...(part.required as unknown[]));
    type ??= part.type;
  }
  const { allOf: _allOf, ...rest } = schema;
  return { ...rest, type: type ?? 'object', properties, required };
}

/** The words of `text` a generated string may use: letters and digits, punctuation dropped. */
export function wordsOf(text: string): string[] {
  // Cut to a word's usual length: the values are tokenized to be streamed (BPE is quadratic in a word).
  return (text.match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []).map((word) => (word.length > 32 ? word.slice(0, 32) : word));
}

/**
 * A JSON value shaped by `parameters` (a JSON Schema object), with strings taken from `words` in
 * order. Deterministic: the same schema and words give the same value.
 */
export function valueFromSchema(parameters: unknown, words: readonly string[]): JsonValue {
  const root = isRecord(parameters) ? parameters : {};
  return new ArgumentGenerator(root, words).value(root, 0);
}

/**
 * The arguments of a simulated call to a tool, as a JSON string: an object generated from
 * `parameters` (`{}` when the tool declares none).
 */
export function toolArgumentsFromSchema(parameters: Record<string, unknown> | undefined, words: readonly string[]): string {
  if (parameters === undefined) return '{}';
  // Parameters are an object schema even when `type` is left out (`{}` means "no arguments").
  const value = valueFromSchema(parameters.type === undefined ? { type: 'object', ...parameters } : parameters, words);
  // A tool's arguments are always an object, even if the schema says otherwise.
  return JSON.stringify(isRecord(value) ? value : { value });
}
