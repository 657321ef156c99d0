/**
 * Required-field readers for Chat Completions. On this surface an explicit `null` in a required
 * field reads as missing ("Missing required parameter: 'x'."), the same as an absent key; the
 * Responses codec reports it as a wrong type instead (responses/required-fields.ts). Everything
 * else is shared in ../field-checks.ts.
 */
import { missingParameter, optionalRecord, optionalString, type JsonRecord } from '../field-checks.js';

export function requireString(value: unknown, param: string): string {
  const text = optionalString(value, param);
  if (text === undefined) throw missingParameter(param);
  return text;
}

export function requireRecord(value: unknown, param: string): JsonRecord {
  const record = optionalRecord(value, param);
  if (record === undefined) throw missingParameter(param);
  return record;
}
