/**
 * What the OpenAI-compatible vendors' error bodies say (docs/wire-protocols.md §20.5). Beside
 * OpenAI's envelope (`{"error":{"message",…}}`) and a bare `{"error":"…"}`, they send:
 * - `{"object":"error","message":…,"type","code"}` (Mistral, vLLM), whose `message` is a string or,
 *   for a refused field, an object (or the JSON text of one) holding a validation `detail` list;
 * - `{"detail":…}` (servers built on FastAPI): a string, or a list of `{loc, msg}`;
 * - OpenRouter's envelope, whose `error.metadata` names the provider it routed to and that
 *   provider's own words (`raw`).
 */
import { isRecord, parseJson } from '../../lib/json-value.js';
import { errorMessageOf, type ErrorBodyReader } from '../shared/error-body.js';

/** How much of a routed provider's own words is kept. */
const RAW_LIMIT = 300;

/** A validation `detail`: a string, or a list of `{loc: [...], msg}`, as `body.field: message`. */
function detailText(detail: unknown): string | undefined {
  if (typeof detail === 'string') return detail;
  if (!Array.isArray(detail)) return undefined;
  const parts = detail.flatMap((item) => {
    if (!isRecord(item) || typeof item.msg !== 'string') return [];
    const where = Array.isArray(item.loc) ? item.loc.filter((part) => typeof part === 'string' || typeof part === 'number').join('.') : '';
    return [where === '' ? item.msg : `${where}: ${item.msg}`];
  });
  return parts.length === 0 ? undefined : parts.join('; ');
}

/** A message that is itself a JSON object with a `detail` (Mistral wrote its 422s so once): that detail. */
function detailOfText(message: string): string | undefined {
  if (!message.startsWith('{')) return undefined;
  const parsed = parseJson(message);
  return parsed.ok && isRecord(parsed.value) ? detailText(parsed.value.detail) : undefined;
}

/** OpenRouter's `error.metadata`: the provider routed to and its own words, when given. */
function routedProvider(error: Record<string, unknown>): string {
  const metadata = isRecord(error.metadata) ? error.metadata : undefined;
  if (metadata === undefined) return '';
  const name = typeof metadata.provider_name === 'string' ? metadata.provider_name : undefined;
  const raw = typeof metadata.raw === 'string' ? metadata.raw.slice(0, RAW_LIMIT) : undefined;
  if (name === undefined && raw === undefined) return '';
  return ` (${[name, raw].filter((part) => part !== undefined).join(': ')})`;
}

export const readVendorErrorBody: ErrorBodyReader = (text) => {
  const parsed = parseJson(text);
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : undefined;
  if (body === undefined) return { message: undefined };
  const error = body.error;
  if (isRecord(error)) {
    const message = errorMessageOf(text);
    return { message: message === undefined ? undefined : `${message}${routedProvider(error)}`, ...(typeof error.type === 'string' ? { statusName: error.type } : {}) };
  }
  if (typeof error === 'string') return { message: error };
  const message = body.message;
  const statusName = typeof body.type === 'string' ? { statusName: body.type } : {};
  if (typeof message === 'string') return { message: detailOfText(message) ?? message, ...statusName };
  if (isRecord(message)) return { message: detailText(message.detail) ?? errorMessageOf(JSON.stringify({ error: message })), ...statusName };
  return { message: detailText(body.detail) };
};
