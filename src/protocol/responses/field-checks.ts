/**
 * Small readers for validating a client body field by field, failing with OpenAI's own wording and
 * codes so that SDK users see the messages they already know, e.g.
 * `Invalid type for 'input': expected a string or an array of input items, but got an integer instead.`
 * Every reader takes the field's OpenAI-style path (`input[2].content[0].text`) as its `param`.
 */
import { InvalidRequestError } from '../canonical.js';

export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How OpenAI names a JSON value's type in its messages ("an integer", "a decimal", "null"). */
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

/** `'a', 'b', and 'c'` — OpenAI's list style for supported values. */
export function quoteList(values: readonly string[]): string {
  const quoted = values.map((value) => `'${value}'`);
  if (quoted.length <= 1) return quoted.join('');
  if (quoted.length === 2) return `${quoted[0]} and ${quoted[1]}`;
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted[quoted.length - 1]}`;
}

export function missing(param: string): InvalidRequestError {
  return new InvalidRequestError(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

/** `expected` reads like OpenAI's: "a string", "an array of input items", "a boolean". */
export function invalidType(param: string, expected: string, value: unknown): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid type for '${param}': expected ${expected}, but got ${describeType(value)} instead.`,
    param,
    'invalid_type',
  );
}

export function invalidValue(param: string, value: unknown, supported: readonly string[]): InvalidRequestError {
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  return new InvalidRequestError(`Invalid value: '${shown}'. Supported values are: ${quoteList(supported)}.`, param, 'invalid_value');
}

export function requireString(value: unknown, param: string): string {
  if (value === undefined) throw missing(param);
  if (typeof value !== 'string') throw invalidType(param, 'a string', value);
  return value;
}

/** A required string that must not be empty (ids, names). */
export function requireNonEmptyString(value: unknown, param: string): string {
  const text = requireString(value, param);
  if (text.length === 0) {
    throw new InvalidRequestError(
      `Invalid '${param}': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
      param,
      'empty_string',
    );
  }
  return text;
}

/** Optional fields: OpenAI treats an explicit `null` like an absent field. */
export function optionalString(value: unknown, param: string, maxLength?: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidType(param, 'a string', value);
  if (maxLength !== undefined && value.length > maxLength) throw stringTooLong(param, value, maxLength);
  return value;
}

export function stringTooLong(param: string, value: string, maxLength: number): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid '${param}': string too long. Expected a string with maximum length ${maxLength}, but got a string with length ${value.length} instead.`,
    param,
    'string_above_max_length',
  );
}

export function optionalBoolean(value: unknown, param: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidType(param, 'a boolean', value);
  return value;
}

export function optionalEnum<T extends string>(value: unknown, param: string, supported: readonly T[]): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidType(param, 'a string', value);
  if (!(supported as readonly string[]).includes(value)) throw invalidValue(param, value, supported);
  return value as T;
}

export function optionalRecord(value: unknown, param: string): JsonRecord | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw invalidType(param, 'an object', value);
  return value;
}

/** A finite number within [minimum, maximum]. */
export function optionalNumber(value: unknown, param: string, minimum: number, maximum: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidType(param, 'a number', value);
  if (value < minimum) {
    throw new InvalidRequestError(
      `Invalid '${param}': decimal below minimum value. Expected a value >= ${minimum}, but got ${value} instead.`,
      param,
      'decimal_below_min_value',
    );
  }
  if (value > maximum) {
    throw new InvalidRequestError(
      `Invalid '${param}': decimal above maximum value. Expected a value <= ${maximum}, but got ${value} instead.`,
      param,
      'decimal_above_max_value',
    );
  }
  return value;
}

/** A safe integer within [minimum, maximum]. */
export function optionalInteger(value: unknown, param: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw invalidType(param, 'an integer', value);
  if (value < minimum) {
    throw new InvalidRequestError(
      `Invalid '${param}': integer below minimum value. Expected a value >= ${minimum}, but got ${value} instead.`,
      param,
      'integer_below_min_value',
    );
  }
  if (value > maximum) {
    throw new InvalidRequestError(
      `Invalid '${param}': integer above maximum value. Expected a value <= ${maximum}, but got ${value} instead.`,
      param,
      'integer_above_max_value',
    );
  }
  return value;
}

export function requireEnum<T extends string>(value: unknown, param: string, supported: readonly T[]): T {
  if (value === undefined) throw missing(param);
  if (typeof value !== 'string') throw invalidType(param, 'a string', value);
  if (!(supported as readonly string[]).includes(value)) throw invalidValue(param, value, supported);
  return value as T;
}
