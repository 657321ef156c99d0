/**
 * Turns a client's JSON Schema (tool parameters) into the OpenAPI 3.0 subset Gemini accepts in
 * `functionDeclarations[].parameters`. Gemini answers a 400 for any keyword outside its `Schema`
 * object, so the conversion keeps only those, rewriting what has an equivalent:
 * https://ai.google.dev/api/caching#Schema (docs/wire-protocols.md §5.2, §5.6).
 *
 * Kept: type, format (only the ones Gemini knows per type), title, description, nullable, enum
 * (strings only), items, minItems, maxItems, properties, required (only names that are properties),
 * minProperties, maxProperties, minLength, maxLength, pattern, example, anyOf, propertyOrdering,
 * default, minimum, maximum.
 * Rewritten: `type: [T, "null"]` → `type: T, nullable: true` (several non-null types keep the
 * first); `anyOf`/`oneOf` with a `{"type":"null"}` member → `nullable`; `oneOf` → `anyOf`; `allOf`
 * → merged into one schema; `$ref` into `$defs`/`definitions` → inlined (a recursive reference
 * becomes a plain object); `const` → a one-value `enum`; `examples[0]` → `example`; enums of
 * non-strings and non-string consts → listed in the description.
 * Dropped: everything else, notably `$schema`, `$id`, `$comment`, `$defs`, `definitions`,
 * `additionalProperties`, `patternProperties`, `unevaluatedProperties`, `strict`, `not`,
 * `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`, `exclusiveMinimum`,
 * `exclusiveMaximum`, `multipleOf`, `uniqueItems`, `contains`, `prefixItems`, `readOnly`,
 * `writeOnly`, `deprecated`, and formats such as `email` or `uri`.
 */
import { isRecord } from '../../lib/json-value.js';

type Schema = Record<string, unknown>;

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);
/** Formats Gemini accepts, by type; any other format is a 400 there. */
const FORMATS: Readonly<Record<string, ReadonlySet<string>>> = {
  string: new Set(['enum', 'date-time']),
  integer: new Set(['int32', 'int64']),
  number: new Set(['float', 'double']),
};
const COPIED_NUMBERS = ['minItems', 'maxItems', 'minProperties', 'maxProperties', 'minLength', 'maxLength', 'minimum', 'maximum'] as const;
/**
 * Deeper than any real tool schema; a bound against self-expanding references. The recursion
 * below follows the client's JSON, whose nesting the gateway already caps at decode time
 * (http/body.ts MAX_JSON_DEPTH), and `$ref` expansions, which this depth (also counted through
 * `allOf`) caps, so it cannot overflow the stack.
 */
const MAX_DEPTH = 32;
/**
 * Schema nodes one conversion may produce. References fan out: a handful of definitions that each
 * use the next twice expand to 2^depth nodes (measured: 22 of them took 49 s and 247 MB). Far
 * above real tool schemas; past it, what is left is dropped as an unexpressible schema would be.
 */
const MAX_NODES = 10_000;

interface Context {
  definitions: Readonly<Record<string, unknown>>;
  /** References being expanded above this node, to cut cycles. */
  expanding: ReadonlySet<string>;
  depth: number;
  /** Nodes still allowed, shared by the whole conversion. */
  budget: { remaining: number };
}

/**
 * The Gemini form of a tool's `parameters`, or undefined when the function takes no parameters
 * (Gemini refuses an object schema with no properties, so such a declaration goes without).
 */
export function toGeminiParameters(parameters: Record<string, unknown> | undefined): Schema | undefined {
  if (parameters === undefined) return undefined;
  const converted = toGeminiSchema(parameters);
  if (converted === undefined || converted.properties === undefined) return undefined;
  return converted;
}

/** The Gemini form of any JSON Schema object; undefined when nothing of it can be expressed. */
export function toGeminiSchema(schema: Record<string, unknown>): Schema | undefined {
  const definitions = { ...recordOr(schema.definitions), ...recordOr(schema.$defs) };
  return convert(schema, { definitions, expanding: new Set(), depth: 0, budget: { remaining: MAX_NODES } });
}

function convert(raw: unknown, context: Context): Schema | undefined {
  if (!isRecord(raw) || context.depth > MAX_DEPTH || context.budget.remaining <= 0) return undefined;
  context.budget.remaining -= 1;
  const expanded = expandReference(raw, context);
  if (expanded === undefined) return { type: 'object' };
  const { node, context: inner } = expanded;
  const source = node.allOf === undefined ? node : mergeAllOf(node, inner);

  const result: Schema = {};
  const notes: string[] = [];
  applyType(source, result);
  if (typeof source.title === 'string') result.title = source.title;
  if (typeof source.description === 'string') result.description = source.description;
  if (source.nullable === true) result.nullable = true;
  applyEnum(source, result, notes);
  applyFormat(source, result);
  for (const key of COPIED_NUMBERS) if (typeof source[key] === 'number') result[key] = source[key];
  if (typeof source.pattern === 'string') result.pattern = source.pattern;
  if (source.default !== undefined) result.default = source.default;
  if (source.example !== undefined) result.example = source.example;
  else if (Array.isArray(source.examples) && source.examples.length > 0) result.example = source.examples[0];
  const child: Context = { ...inner, depth: inner.depth + 1 };
  applyObject(source, result, child);
  applyItems(source, result, child);
  applyAlternatives(source, result, child);
  if (notes.length > 0) result.description = [result.description, ...notes].filter((text) => text !== undefined && text !== '').join(' ');
  return result;
}

/** Follows a local `$ref` (siblings win over the target, as in JSON Schema 2019+). */
function expandReference(node: Schema, context: Context): { node: Schema; context: Context } | undefined {
  if (typeof node.$ref !== 'string') return { node, context };
  const name = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(node.$ref)?.[1];
  const target = name === undefined ? undefined : context.definitions[decodeURIComponent(name)];
  if (name === undefined || !isRecord(target) || context.expanding.has(name)) return undefined;
  const { $ref: _reference, ...siblings } = node;
  return { node: { ...target, ...siblings }, context: { ...context, expanding: new Set([...context.expanding, name]) } };
}

/** One schema with the members of `allOf` folded in: properties and required are united. */
function mergeAllOf(node: Schema, context: Context): Schema {
  const { allOf, ...rest } = node;
  const merged: Schema = { ...rest };
  const members = Array.isArray(allOf) && context.depth <= MAX_DEPTH ? allOf : [];
  for (const member of members) {
    if (context.budget.remaining <= 0) break;
    context.budget.remaining -= 1;
    const expanded = isRecord(member) ? expandReference(member, context) : undefined;
    if (expanded === undefined) continue;
    const inner = { ...expanded.context, depth: expanded.context.depth + 1 };
    const resolved = expanded.node.allOf === undefined ? expanded.node : mergeAllOf(expanded.node, inner);
    for (const [key, value] of Object.entries(resolved)) {
      if (key === 'properties' && isRecord(value)) merged.properties = { ...recordOr(merged.properties), ...value };
      else if (key === 'required' && Array.isArray(value)) merged.required = [...new Set([...(Array.isArray(merged.required) ? merged.required : []), ...value])];
      else if (!(key in merged)) merged[key] = value;
    }
  }
  return merged;
}

function applyType(source: Schema, result: Schema): void {
  const types = (Array.isArray(source.type) ? source.type : [source.type]).filter((type): type is string => typeof type === 'string');
  if (types.includes('null')) result.nullable = true;
  const type = types.find((candidate) => TYPES.has(candidate)) ?? (isRecord(source.properties) ? 'object' : undefined);
  if (type !== undefined) result.type = type;
}

function applyEnum(source: Schema, result: Schema, notes: string[]): void {
  const values = Array.isArray(source.enum) ? source.enum : source.const !== undefined ? [source.const] : undefined;
  if (values === undefined) return;
  if (values.includes(null)) result.nullable = true;
  const present = values.filter((value) => value !== null);
  if (present.length === 0) return;
  if (present.every((value) => typeof value === 'string')) {
    result.enum = present;
    return;
  }
  // Gemini enums are strings only; the allowed values still guide the model through the text.
  notes.push(`Allowed values: ${present.map((value) => JSON.stringify(value)).join(', ')}.`);
}

function applyFormat(source: Schema, result: Schema): void {
  if (typeof source.format !== 'string' || typeof result.type !== 'string') return;
  if (FORMATS[result.type]?.has(source.format) === true) result.format = source.format;
}

function applyObject(source: Schema, result: Schema, context: Context): void {
  if (!isRecord(source.properties)) return;
  const properties: Schema = {};
  for (const [name, value] of Object.entries(source.properties)) {
    const converted = convert(value, context);
    if (converted !== undefined) properties[name] = converted;
  }
  const names = Object.keys(properties);
  if (names.length === 0) return;
  result.properties = properties;
  if (Array.isArray(source.required)) {
    const required = source.required.filter((name): name is string => typeof name === 'string' && names.includes(name));
    if (required.length > 0) result.required = [...new Set(required)];
  }
  if (Array.isArray(source.propertyOrdering)) {
    const ordering = source.propertyOrdering.filter((name): name is string => typeof name === 'string' && names.includes(name));
    if (ordering.length > 0) result.propertyOrdering = ordering;
  }
}

function applyItems(source: Schema, result: Schema, context: Context): void {
  // A tuple (`items: [...]`, draft 4–7) keeps its first member's schema: Gemini has no tuples.
  const items = Array.isArray(source.items) ? (source.items[0] as unknown) : source.items;
  const converted = convert(items, context);
  if (converted !== undefined) result.items = converted;
  else if (result.type === 'array') result.items = {};
}

function applyAlternatives(source: Schema, result: Schema, context: Context): void {
  const members = [...(Array.isArray(source.anyOf) ? source.anyOf : []), ...(Array.isArray(source.oneOf) ? source.oneOf : [])];
  if (members.length === 0) return;
  const alternatives: Schema[] = [];
  for (const member of members) {
    if (isRecord(member) && member.type === 'null') {
      result.nullable = true;
      continue;
    }
    const converted = convert(member, context);
    if (converted !== undefined) alternatives.push(converted);
  }
  const [only] = alternatives;
  if (alternatives.length === 1 && only !== undefined) {
    // `anyOf: [X, null]`, the usual optional field: X itself, nullable. The node's own words win.
    for (const [key, value] of Object.entries(only)) if (!(key in result)) result[key] = value;
    return;
  }
  if (alternatives.length > 1) result.anyOf = alternatives;
}

function recordOr(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}
