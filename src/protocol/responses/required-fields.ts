/**
 * Required-field readers for Responses. On this surface only an absent key is missing; an explicit
 * `null` is a value of the wrong type ("expected a string, but got null instead"), as the tests pin
 * for `input[0].role`. The Chat Completions codec reads `null` as missing instead
 * (chat-completions/required-fields.ts). Everything else is shared in ../field-checks.ts.
 */
import { emptyString, invalidType, invalidValue, missingParameter } from '../field-checks.js';

export function requireString(value: unknown, param: string): string {
  if (value === undefined) throw missingParameter(param);
  if (typeof value !== 'string') throw invalidType(param, 'a string', value);
  return value;
}

/** A required string that must not be empty (ids, names). */
export function requireNonEmptyString(value: unknown, param: string): string {
  const text = requireString(value, param);
  if (text.length === 0) throw emptyString(param);
  return text;
}

/** A required string that must be one of `supported`. */
export function requireEnum<T extends string>(value: unknown, param: string, supported: readonly T[]): T {
  const text = requireString(value, param);
  if (!(supported as readonly string[]).includes(text)) throw invalidValue(param, text, supported);
  return text as T;
}
