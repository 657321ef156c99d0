/**
 * The request `metadata` field both OpenAI surfaces share: at most 16 string pairs, keys up to 64
 * characters, values up to 512. https://platform.openai.com/docs/api-reference/responses/create#responses-create-metadata
 */
import { memberPath } from './client-echo.js';
import { invalidType, optionalRecord, stringTooLong, tooManyProperties } from './field-checks.js';

const MAXIMUM_PAIRS = 16;
const MAXIMUM_KEY_LENGTH = 64;
const MAXIMUM_VALUE_LENGTH = 512;

/**
 * Validates `metadata` (absent or null → `{}`) and returns its pairs. `longKeyParam` gives the
 * `param` of a too-long key: the two codecs name it differently (`metadata` on Chat Completions,
 * `metadata.<key>` on Responses) and their tests pin each.
 */
export function decodeMetadata(value: unknown, longKeyParam: (key: string) => string): Record<string, string> {
  const metadata = optionalRecord(value, 'metadata');
  if (metadata === undefined) return {};
  const entries = Object.entries(metadata);
  if (entries.length > MAXIMUM_PAIRS) throw tooManyProperties('metadata', MAXIMUM_PAIRS, entries.length);
  const checked = entries.map(([key, entry]): [string, string] => {
    if (key.length > MAXIMUM_KEY_LENGTH) throw stringTooLong(longKeyParam(key), MAXIMUM_KEY_LENGTH, key.length);
    const param = memberPath('metadata', key);
    if (typeof entry !== 'string') throw invalidType(param, 'a string', entry);
    if (entry.length > MAXIMUM_VALUE_LENGTH) throw stringTooLong(param, MAXIMUM_VALUE_LENGTH, entry.length);
    return [key, entry];
  });
  // fromEntries defines own properties, so a key such as "__proto__" is kept rather than lost.
  return Object.fromEntries(checked);
}
