/**
 * The embeddings request as the gateway reads it (docs/wire-protocols.md §7): decoded with OpenAI's
 * own 400 wording, its inputs counted exactly, and vectors written in the encoding the client asked
 * for (`float`, or `base64`: little-endian float32, which openai-node asks for by default).
 */
import { InvalidRequestError } from './canonical.js';
import {
  arrayTooLong,
  emptyArray,
  invalidType,
  isRecord,
  missingParameter,
  optionalEnum,
  optionalInteger,
  optionalString,
  unknownParameter,
} from './field-checks.js';
import { countTexts } from './tokens.js';

/** At most this many inputs in one request (OpenAI's `maxItems`). */
export const MAX_EMBEDDING_INPUTS = 2_048;

export const EMBEDDING_ENCODINGS = ['float', 'base64'] as const;
export type EmbeddingEncoding = (typeof EMBEDDING_ENCODINGS)[number];

/** One input: a text, or the token ids of one (meaningful only to the tokenizer of OpenAI's own models). */
export type EmbeddingInput = string | readonly number[];

export interface EmbeddingsRequest {
  model: string;
  inputs: readonly EmbeddingInput[];
  dimensions?: number;
  encodingFormat: EmbeddingEncoding;
  user?: string;
}

const KNOWN_FIELDS = new Set(['model', 'input', 'dimensions', 'encoding_format', 'user']);

/** The `'$.input' is invalid` 400 OpenAI answers for an empty text or an input it cannot read (§7.3). */
function invalidInput(): InvalidRequestError {
  return new InvalidRequestError("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input', 'invalid_value');
}

function isTokenArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((token) => typeof token === 'number' && Number.isSafeInteger(token) && token >= 0);
}

function decodeInputs(input: unknown): EmbeddingInput[] {
  if (input === undefined || input === null) throw missingParameter('input');
  if (typeof input === 'string') {
    if (input === '') throw invalidInput();
    return [input];
  }
  if (!Array.isArray(input)) throw invalidType('input', 'one of a string, an array of strings, an array of integers or an array of integer arrays', input);
  if (input.length === 0) throw emptyArray('input');
  if (input.length > MAX_EMBEDDING_INPUTS) throw arrayTooLong('input', MAX_EMBEDDING_INPUTS, input.length);
  // One token array, or an array of strings or of token arrays (not mixed).
  if (isTokenArray(input)) return [input];
  if (input.every((item) => typeof item === 'string')) {
    if (input.some((item) => item === '')) throw invalidInput();
    return input;
  }
  if (input.every((item) => isTokenArray(item) && item.length > 0)) return input;
  throw invalidInput();
}

/** The request, or OpenAI's 400 for what it would refuse. Unknown fields are refused (the schema is closed). */
export function decodeEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  if (!isRecord(body)) throw new InvalidRequestError(`Invalid type for request body: expected an object, but got ${Array.isArray(body) ? 'an array' : typeof body} instead.`, null, 'invalid_type');
  for (const key of Object.keys(body)) if (!KNOWN_FIELDS.has(key)) throw unknownParameter(key);
  const model = body.model;
  if (model === undefined || model === null) throw missingParameter('model');
  if (typeof model !== 'string') throw invalidType('model', 'a string', model);
  if (model === '') throw new InvalidRequestError("Invalid 'model': empty string. Expected a string with minimum length 1, but got an empty string instead.", 'model', 'empty_string');
  const inputs = decodeInputs(body.input);
  const dimensions = optionalInteger(body.dimensions, 'dimensions', { minimum: 1 });
  const encodingFormat = optionalEnum(body.encoding_format, 'encoding_format', EMBEDDING_ENCODINGS) ?? 'float';
  const user = optionalString(body.user, 'user');
  return {
    model,
    inputs,
    encodingFormat,
    ...(dimensions === undefined ? {} : { dimensions }),
    ...(user === undefined ? {} : { user }),
  };
}

/** The texts of a request, or null when it has token arrays (an upstream of another vendor cannot read them). */
export function embeddingTexts(request: EmbeddingsRequest): string[] | null {
  return request.inputs.every((input) => typeof input === 'string') ? (request.inputs as string[]) : null;
}

/**
 * The input tokens of a request, exactly: each text tokenized (a slice at a time, yielding between
 * slices for the driver to pause, lib/run-yielding.ts), each token array its length.
 */
export function* countEmbeddingTokens(inputs: readonly EmbeddingInput[]): Generator<void, number> {
  const tokenIds = inputs.reduce((sum, input) => sum + (typeof input === 'string' ? 0 : input.length), 0);
  return tokenIds + (yield* countTexts(inputs.filter((input): input is string => typeof input === 'string')));
}

/** A vector as the client asked: the numbers, or their little-endian float32 bytes in base64. */
export function encodeEmbedding(values: readonly number[], encoding: EmbeddingEncoding): number[] | string {
  if (encoding === 'float') return [...values];
  const bytes = Buffer.alloc(values.length * 4);
  for (let index = 0; index < values.length; index += 1) bytes.writeFloatLE(values[index]!, index * 4);
  return bytes.toString('base64');
}

/** The float32 values of a base64 vector (what openai-node decodes). */
export function decodeBase64Embedding(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const values: number[] = [];
  for (let offset = 0; offset + 4 <= bytes.length; offset += 4) values.push(bytes.readFloatLE(offset));
  return values;
}

/** The OpenAI answer for vectors in input order, before the gateway names the model and the usage. */
export function embeddingsAnswer(vectors: readonly (readonly number[])[], encoding: EmbeddingEncoding): Record<string, unknown> {
  return {
    object: 'list',
    data: vectors.map((values, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(values, encoding) })),
  };
}
