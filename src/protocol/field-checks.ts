/**
 * Small readers for client JSON that fail with OpenAI's own 400 wording, shared by both client
 * codecs (chat-completions/, responses/) so a client written against api.openai.com sees the same
 * `message`, `param` and `code` from Tollgate. The phrasing ("Missing required parameter: 'x'.",
 * "Invalid type for 'x': expected …, but got … instead.") is copied from OpenAI's validation errors;
 * `param` is the field's path in the client's own terms (`input[2].content[0].text`).
 *
 * Optional readers treat absent and `null` alike: OpenAI marks most optional request fields
 * nullable, and several client libraries serialise unset options as `null`. Required readers live
 * beside each codec, because the two surfaces answer an explicit `null` in a required field
 * differently (see their required-fields.ts).
 */
import { InvalidRequestError } from './canonical.js';
import { clipEcho } from './client-echo.js';

export type JsonRecord = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How OpenAI names the type of a value it did not expect ("an integer", "a decimal", "null"). */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'boolean':
      return 'a boolean';
    case 'number':
      return Number.isInteger(value) ? 'an integer' : 'a decimal';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** `'a', 'b', and 'c'` — OpenAI's list of supported values. */
function quoteList(values: readonly string[]): string {
  const quoted = values.map((value) => `'${value}'`);
  if (quoted.length <= 1) return quoted.join('');
  if (quoted.length === 2) return `${quoted[0]} and ${quoted[1]}`;
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted[quoted.length - 1]}`;
}

// --- OpenAI's error constructors -------------------------------------------------------------

/** A top-level key OpenAI does not know; `param` is the key itself (a long one clipped, client-echo.ts). */
export function unknownParameter(key: string): InvalidRequestError {
  const shown = clipEcho(key);
  return new InvalidRequestError(`Unrecognized request argument supplied: ${shown}`, shown, 'unknown_parameter');
}

export function missingParameter(param: string): InvalidRequestError {
  return new InvalidRequestError(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

/** `expected` reads like OpenAI's: "a string", "an array of input items", "one of a string or object". */
export function invalidType(param: string, expected: string, value: unknown): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid type for '${param}': expected ${expected}, but got ${describeType(value)} instead.`,
    param,
    'invalid_type',
  );
}

/** `value` is the client's, clipped when long (client-echo.ts). */
export function invalidValue(param: string, value: string, supported: readonly string[]): InvalidRequestError {
  return new InvalidRequestError(`Invalid value: '${clipEcho(value)}'. Supported values are: ${quoteList(supported)}.`, param, 'invalid_value');
}

export function emptyArray(param: string): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`,
    param,
    'empty_array',
  );
}

export function emptyString(param: string): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid '${param}': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
    param,
    'empty_string',
  );
}

export function stringTooLong(param: string, maximum: number, length: number): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid '${param}': string too long. Expected a string with maximum length ${maximum}, but got a string with length ${length} instead.`,
    param,
    'string_above_max_length',
  );
}

export function arrayTooLong(param: string, maximum: number, length: number): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid '${param}': array too long. Expected an array with maximum length ${maximum}, but got an array with length ${length} instead.`,
    param,
    'array_above_max_length',
  );
}

export function tooManyProperties(param: string, maximum: number, count: number): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid '${param}': too many properties. Expected an object with at most ${maximum} properties, but got an object with ${count} properties instead.`,
    param,
    'object_above_max_properties',
  );
}

/** `pattern` is shown as given, so each surface can quote the pattern OpenAI documents for it. */
export function patternMismatch(param: string, pattern: string): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid '${param}': string does not match pattern. Expected a string that matches the pattern '${pattern}'.`,
    param,
    'invalid_value',
  );
}

/** A key that OpenAI knows but Tollgate does not serve; `message` says why. */
export function unsupportedParameter(param: string, message: string): InvalidRequestError {
  return new InvalidRequestError(message, param, 'unsupported_parameter');
}

/** A value that OpenAI accepts but Tollgate does not serve; `message` says why. */
export function unsupportedValue(param: string, message: string): InvalidRequestError {
  return new InvalidRequestError(message, param, 'unsupported_value');
}

// --- Optional readers: `undefined` when absent or null ---------------------------------------

export function optionalString(value: unknown, param: string, maxLength?: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidType(param, 'a string', value);
  if (maxLength !== undefined && value.length > maxLength) throw stringTooLong(param, maxLength, value.length);
  return value;
}

export function optionalBoolean(value: unknown, param: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidType(param, 'a boolean', value);
  return value;
}

/** A string that must be one of `supported`. */
export function optionalEnum<T extends string>(value: unknown, param: string, supported: readonly T[]): T | undefined {
  const text = optionalString(value, param);
  if (text === undefined) return undefined;
  if (!(supported as readonly string[]).includes(text)) throw invalidValue(param, text, supported);
  return text as T;
}

export function optionalRecord(value: unknown, param: string): JsonRecord | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw invalidType(param, 'an object', value);
  return value;
}

export function optionalArray(value: unknown, param: string): unknown[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidType(param, 'an array', value);
  return value;
}

/** Element `index` of an array that must hold objects; `param` is the array's path. */
export function recordAt(array: readonly unknown[], index: number, param: string): JsonRecord {
  const value = array[index];
  if (!isRecord(value)) throw invalidType(`${param}[${index}]`, 'an object', value);
  return value;
}

/** Inclusive bounds; either may be left out. */
export interface Range {
  minimum?: number;
  maximum?: number;
}

/** A safe integer within `range`. */
export function optionalInteger(value: unknown, param: string, range: Range = {}): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw invalidType(param, 'an integer', value);
  return withinRange(value, param, 'integer', range);
}

/**
 * A finite number within `range`. `expected` names the type in the invalid-type message: OpenAI
 * says "a decimal" on Chat Completions; the Responses codec words it "a number".
 */
export function optionalNumber(value: unknown, param: string, range: Range = {}, expected = 'a decimal'): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidType(param, expected, value);
  return withinRange(value, param, 'decimal', range);
}

/** OpenAI's range errors, which name the kind of number: `integer_below_min_value`, `decimal_above_max_value`. */
function withinRange(value: number, param: string, kind: 'integer' | 'decimal', range: Range): number {
  if (range.minimum !== undefined && value < range.minimum) {
    throw new InvalidRequestError(
      `Invalid '${param}': ${kind} below minimum value. Expected a value >= ${range.minimum}, but got ${value} instead.`,
      param,
      `${kind}_below_min_value`,
    );
  }
  if (range.maximum !== undefined && value > range.maximum) {
    throw new InvalidRequestError(
      `Invalid '${param}': ${kind} above maximum value. Expected a value <= ${range.maximum}, but got ${value} instead.`,
      param,
      `${kind}_above_max_value`,
    );
  }
  return value;
}
