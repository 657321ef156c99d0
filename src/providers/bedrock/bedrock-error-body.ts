/**
 * What Bedrock's error bodies say (docs/wire-protocols.md §18.5): `{"message": "…"}` (some AWS
 * front ends write `Message`), the error's name in the `x-amzn-ErrorType` header and, from some
 * front ends, in the body's `__type` (`…#ThrottlingException`). The status decides what happens
 * (403 the gateway's credentials, 429 and 5xx fail over, other 4xx are the client's).
 */
import { isRecord, parseJson } from '../../lib/json-value.js';
import type { ErrorBodyReader } from '../shared/error-body.js';

export const readBedrockErrorBody: ErrorBodyReader = (text) => {
  const parsed = parseJson(text);
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : undefined;
  const message = typeof body?.message === 'string' ? body.message : typeof body?.Message === 'string' ? body.Message : undefined;
  const type = typeof body?.__type === 'string' ? body.__type.split('#').at(-1) : undefined;
  return { message, ...(type === undefined || type === '' ? {} : { statusName: type }) };
};
