/**
 * Tool names: the rule a function's name (and a json_schema format's) follows, which every tool
 * list and format decoder reads (decode-tools.ts, custom-tools.ts, decode-request.ts), and the
 * flat name a namespaced tool gets on translated routes. Chat, Anthropic and Gemini know only a
 * flat list of functions, so `{type: "namespace", name: "collaboration", tools: [{name:
 * "spawn_agent"}]}` becomes the function `collaboration__spawn_agent`. The name is a pure function
 * of the two parts, so a call replayed in a later turn (`{type: "function_call", namespace,
 * name}`) maps to the same flat name without the tools at hand.
 */
import { createHash } from 'node:crypto';
import { patternMismatch } from '../field-checks.js';
import { requireString } from './required-fields.js';

/** The longest function name every upstream accepts (OpenAI and Gemini: 64). */
const MAX_NAME_LENGTH = 64;
const SEPARATOR = '__';

export function flatToolName(namespace: string, name: string): string {
  const joined = `${namespace}${SEPARATOR}${name}`;
  // Every upstream takes [A-Za-z0-9_-]; Gemini also wants a letter or underscore first.
  if (joined.length <= MAX_NAME_LENGTH && /^[A-Za-z_][A-Za-z0-9_-]*$/.test(joined)) return joined;
  // Too long or unusual characters: a cleaned prefix plus a short hash of the exact parts.
  const hash = createHash('sha256').update(`${namespace}\u0000${name}`).digest('hex').slice(0, 8);
  const cleaned = `_${joined.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return `${cleaned.slice(0, MAX_NAME_LENGTH - hash.length - 1)}_${hash}`;
}

/** OpenAI's rule for function (and json_schema format) names. */
export const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** A name matching {@link FUNCTION_NAME_PATTERN}; `param` is where it sits. */
export function decodeName(value: unknown, param: string): string {
  const name = requireString(value, param);
  if (!FUNCTION_NAME_PATTERN.test(name)) throw patternMismatch(param, FUNCTION_NAME_PATTERN.source);
  return name;
}
