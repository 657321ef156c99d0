/**
 * The moderations request as the gateway reads it (docs/wire-protocols.md §11): `input` a string, an
 * array of strings, or an array of text and image parts (one input); `model` optional, OpenAI's
 * default named explicitly. No usage comes back, so what is billed is the gateway's own count:
 * the texts' tokens and a flat allowance per image (priced like any model; free unless priced).
 */
import { InvalidRequestError } from './canonical.js';
import { emptyArray, invalidType, isRecord, missingParameter, optionalString, unknownParameter } from './field-checks.js';
import { countTexts, TOKENS_PER_IMAGE } from './tokens.js';

/** The model OpenAI moderates with when the request names none. */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

export type ModerationPart = { type: 'text'; text: string } | { type: 'image_url'; url: string };

export interface ModerationsRequest {
  model: string;
  /** Strings (one result each), or the parts of one multimodal input. */
  input: readonly string[] | readonly ModerationPart[];
}

const KNOWN_FIELDS = new Set(['model', 'input']);

function decodePart(value: unknown, index: number): ModerationPart {
  const param = `input[${index}]`;
  if (!isRecord(value)) throw invalidType(param, 'an object', value);
  if (value.type === 'text') {
    if (typeof value.text !== 'string') throw invalidType(`${param}.text`, 'a string', value.text);
    return { type: 'text', text: value.text };
  }
  if (value.type === 'image_url') {
    const url = isRecord(value.image_url) ? value.image_url.url : undefined;
    if (typeof url !== 'string') throw invalidType(`${param}.image_url.url`, 'a string', url);
    return { type: 'image_url', url };
  }
  throw new InvalidRequestError(`Invalid value: '${String(value.type).slice(0, 40)}'. Supported values are: 'text' and 'image_url'.`, `${param}.type`, 'invalid_value');
}

export function decodeModerationsRequest(body: unknown): ModerationsRequest {
  if (!isRecord(body)) throw new InvalidRequestError(`Invalid type for request body: expected an object, but got ${Array.isArray(body) ? 'an array' : typeof body} instead.`, null, 'invalid_type');
  for (const key of Object.keys(body)) if (!KNOWN_FIELDS.has(key)) throw unknownParameter(key);
  const model = optionalString(body.model, 'model') ?? DEFAULT_MODERATION_MODEL;
  const input = body.input;
  if (input === undefined || input === null) throw missingParameter('input');
  if (typeof input === 'string') return { model, input: [input] };
  if (!Array.isArray(input)) throw invalidType('input', 'one of a string, an array of strings or an array of objects', input);
  if (input.length === 0) throw emptyArray('input');
  if (input.every((item) => typeof item === 'string')) return { model, input };
  return { model, input: input.map(decodePart) };
}

/** The input tokens of a request: each text's, a flat allowance per image; yielding between slices. */
export function* countModerationTokens(request: ModerationsRequest): Generator<void, number> {
  const texts = request.input.map((item) => (typeof item === 'string' ? item : item.type === 'text' ? item.text : undefined));
  const images = texts.filter((text) => text === undefined).length;
  return images * TOKENS_PER_IMAGE + (yield* countTexts(texts.filter((text): text is string => text !== undefined)));
}

/** The 13 categories of OpenAI's moderation models. */
export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;
