/**
 * Small readers for client JSON that fail with OpenAI's own 400 wording, so a client written
 * against api.openai.com sees the same `message`, `param` and `code` from Tollgate. The phrasing
 * ("Missing required parameter: 'x'.", "Invalid type for 'x': expected …, but got … instead.") is
 * copied from OpenAI's validation errors; `param` is the path in the client's own terms.
 *
 * Absent and `null` are treated alike for optional fields: OpenAI marks most optional request
 * fields nullable, and several client libraries serialise unset options as `null`.
 */
import { InvalidRequestError } from '../canonical.js';

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How OpenAI names the type of a value it did not expect ("an integer", "a decimal", "null"). */
export function describeValue(value: unknown): string {
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

export function missingParameter(param: string): InvalidRequestError {
  return new InvalidRequestError(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

export function invalidType(param: string, expected: string, value: unknown): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid type for '${param}': expected ${expected}, but got ${describeValue(value)} instead.`,
    param,
    'invalid_type',
  );
}

export function invalidValue(param: string, value: string, supported: readonly string[]): InvalidRequestError {
  return new InvalidRequestError(`Invalid value: '${value}'. Supported values are: ${quoteList(supported)}.`, param, 'invalid_value');
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

/** A key that OpenAI knows but Tollgate does not serve. */
export function unsupportedParameter(param: string, message: string): InvalidRequestError {
  return new InvalidRequestError(message, param, 'unsupported_parameter');
}

export function unsupportedValue(param: string, message: string): InvalidRequestError {
  return new InvalidRequestError(message, param, 'unsupported_value');
}

/** Reads `object[key]` as an object; `undefined` when absent or null. */
export function optionalObject(object: JsonObject, key: string, param: string): JsonObject | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw invalidType(param, 'an object', value);
  return value;
}

export function requiredObject(object: JsonObject, key: string, param: string): JsonObject {
  const value = optionalObject(object, key, param);
  if (value === undefined) throw missingParameter(param);
  return value;
}

export function optionalString(object: JsonObject, key: string, param: string): string | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidType(param, 'a string', value);
  return value;
}

export function requiredString(object: JsonObject, key: string, param: string): string {
  const value = optionalString(object, key, param);
  if (value === undefined) throw missingParameter(param);
  return value;
}

export function optionalBoolean(object: JsonObject, key: string, param: string): boolean | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidType(param, 'a boolean', value);
  return value;
}

export function optionalEnum<T extends string>(object: JsonObject, key: string, param: string, allowed: readonly T[]): T | undefined {
  const value = optionalString(object, key, param);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw invalidValue(param, value, allowed);
  return value as T;
}

export interface Range {
  minimum?: number;
  maximum?: number;
}

export function optionalInteger(object: JsonObject, key: string, param: string, range: Range = {}): number | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw invalidType(param, 'an integer', value);
  if (range.minimum !== undefined && value < range.minimum) {
    throw new InvalidRequestError(
      `Invalid '${param}': integer below minimum value. Expected a value >= ${range.minimum}, but got ${value} instead.`,
      param,
      'integer_below_min_value',
    );
  }
  if (range.maximum !== undefined && value > range.maximum) {
    throw new InvalidRequestError(
      `Invalid '${param}': integer above maximum value. Expected a value <= ${range.maximum}, but got ${value} instead.`,
      param,
      'integer_above_max_value',
    );
  }
  return value;
}

export function optionalNumber(object: JsonObject, key: string, param: string, range: Range = {}): number | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidType(param, 'a decimal', value);
  if (range.minimum !== undefined && value < range.minimum) {
    throw new InvalidRequestError(
      `Invalid '${param}': decimal below minimum value. Expected a value >= ${range.minimum}, but got ${value} instead.`,
      param,
      'decimal_below_min_value',
    );
  }
  if (range.maximum !== undefined && value > range.maximum) {
    throw new InvalidRequestError(
      `Invalid '${param}': decimal above maximum value. Expected a value <= ${range.maximum}, but got ${value} instead.`,
      param,
      'decimal_above_max_value',
    );
  }
  return value;
}

/** Reads `object[key]` as an array; `undefined` when absent or null. */
export function optionalArray(object: JsonObject, key: string, param: string): unknown[] | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidType(param, 'an array', value);
  return value;
}

/** Each element of an array that must hold objects, with its path. */
export function objectAt(array: readonly unknown[], index: number, param: string): JsonObject {
  const value = array[index];
  if (!isJsonObject(value)) throw invalidType(`${param}[${index}]`, 'an object', value);
  return value;
}
