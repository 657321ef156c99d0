/**
 * The image requests as the gateway reads them (docs/wire-protocols.md §8, §16): generations as a
 * JSON body, edits as the text fields of a multipart upload (numbers and booleans sent as text, as
 * openai-node sends them) beside the files (`image` or `image[]`, `mask`). OpenAI's 400 wording;
 * unknown fields refused (the schemas are closed). `model` is required: the gateway routes on it
 * and applies no default of its own (§8.1). Streaming serves one image: `stream` with `n` above 1
 * is refused, since OpenAI's events do not say which image they belong to (§8.4).
 *
 * Also what the answers report, for the bill: the usage of GPT image models in tokens
 * (`usageOfImageAnswer`), and the size and quality the upstream chose.
 */
import { InvalidRequestError, type Usage } from './canonical.js';
import {
  emptyString,
  invalidType,
  isRecord,
  missingParameter,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalString,
  stringTooLong,
  unknownParameter,
  unsupportedValue,
} from './field-checks.js';
import { countTexts, TOKENS_PER_IMAGE } from './tokens.js';

export const IMAGE_SIZES = ['auto', '1024x1024', '1536x1024', '1024x1536', '256x256', '512x512', '1792x1024', '1024x1792'] as const;
export type ImageSize = (typeof IMAGE_SIZES)[number];
export const IMAGE_QUALITIES = ['auto', 'low', 'medium', 'high', 'standard', 'hd'] as const;
export type ImageQuality = (typeof IMAGE_QUALITIES)[number];
export const IMAGE_RESPONSE_FORMATS = ['url', 'b64_json'] as const;
export const IMAGE_OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;
export type ImageOutputFormat = (typeof IMAGE_OUTPUT_FORMATS)[number];
export const IMAGE_BACKGROUNDS = ['transparent', 'opaque', 'auto'] as const;

/** At most this many images per request (OpenAI's `n` maximum). */
export const MAX_IMAGES = 10;
/** At most this many partial images before the final one. */
export const MAX_PARTIAL_IMAGES = 3;
/** The longest prompt (GPT image models; DALL·E upstreams refuse less themselves). */
export const MAX_IMAGE_PROMPT_CHARACTERS = 32_000;

/** A file of an edit (an uploaded file as the gateway holds it: its chunks, never joined). */
export interface ImageFile {
  readonly filename: string;
  readonly contentType: string;
  readonly chunks: readonly Buffer[];
  readonly size: number;
}

/** What both endpoints read; the other fields are checked and forwarded as the client sent them. */
export interface ImageGenerationRequest {
  model: string;
  prompt: string;
  n: number;
  size: ImageSize;
  quality: ImageQuality;
  responseFormat?: (typeof IMAGE_RESPONSE_FORMATS)[number];
  outputFormat?: ImageOutputFormat;
  background?: (typeof IMAGE_BACKGROUNDS)[number];
  stream: boolean;
  /** With `stream`: the partial images asked for before the final one (0 by default). */
  partialImages: number;
}

export interface ImageEditRequest extends ImageGenerationRequest {
  /** The images to edit, in the order sent (at least one). */
  images: readonly ImageFile[];
  mask?: ImageFile;
}

const COMMON_FIELDS = ['model', 'prompt', 'n', 'size', 'quality', 'response_format', 'output_format', 'output_compression', 'background', 'user', 'stream', 'partial_images'];
const GENERATION_FIELDS = new Set([...COMMON_FIELDS, 'moderation', 'style']);
/** The text fields of an edit; its files come as `image`, `image[]` and `mask`. */
export const IMAGE_EDIT_TEXT_FIELDS: ReadonlySet<string> = new Set([...COMMON_FIELDS, 'input_fidelity']);
export const IMAGE_EDIT_FILE_FIELDS: ReadonlySet<string> = new Set(['image', 'image[]', 'mask']);

/** Where a field's value comes from: JSON as it is, or a form's text, read as the field's type. */
type Read = (field: string, kind: 'string' | 'integer' | 'boolean') => unknown;

function readJson(body: Record<string, unknown>): Read {
  return (field) => body[field];
}

/** A form's text as the value openai-node encoded: integers and booleans from their text; anything else stays text (and is refused as one). */
function readForm(texts: ReadonlyMap<string, string>): Read {
  return (field, kind) => {
    const text = texts.get(field);
    if (text === undefined) return undefined;
    if (kind === 'integer' && /^-?\d{1,15}$/.test(text)) return Number(text);
    if (kind === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
    return text;
  };
}

function decodeCommon(read: Read): ImageGenerationRequest {
  const model = read('model', 'string');
  if (model === undefined || model === null) throw missingParameter('model');
  if (typeof model !== 'string') throw invalidType('model', 'a string', model);
  if (model === '') throw emptyString('model');
  const prompt = read('prompt', 'string');
  if (prompt === undefined || prompt === null) throw missingParameter('prompt');
  if (typeof prompt !== 'string') throw invalidType('prompt', 'a string', prompt);
  if (prompt === '') throw emptyString('prompt');
  if (prompt.length > MAX_IMAGE_PROMPT_CHARACTERS) throw stringTooLong('prompt', MAX_IMAGE_PROMPT_CHARACTERS, prompt.length);
  const n = optionalInteger(read('n', 'integer'), 'n', { minimum: 1, maximum: MAX_IMAGES }) ?? 1;
  const size = optionalEnum(read('size', 'string'), 'size', IMAGE_SIZES) ?? 'auto';
  const quality = optionalEnum(read('quality', 'string'), 'quality', IMAGE_QUALITIES) ?? 'auto';
  const responseFormat = optionalEnum(read('response_format', 'string'), 'response_format', IMAGE_RESPONSE_FORMATS);
  const outputFormat = optionalEnum(read('output_format', 'string'), 'output_format', IMAGE_OUTPUT_FORMATS);
  optionalInteger(read('output_compression', 'integer'), 'output_compression', { minimum: 0, maximum: 100 });
  const background = optionalEnum(read('background', 'string'), 'background', IMAGE_BACKGROUNDS);
  optionalString(read('user', 'string'), 'user');
  const stream = optionalBoolean(read('stream', 'boolean'), 'stream') ?? false;
  const partialImages = optionalInteger(read('partial_images', 'integer'), 'partial_images', { minimum: 0, maximum: MAX_PARTIAL_IMAGES }) ?? 0;
  if (stream && n > 1) {
    throw unsupportedValue('n', 'Streaming serves one image per request: ask for n = 1 with stream, or leave stream off for more images.');
  }
  return {
    model,
    prompt,
    n,
    size,
    quality,
    stream,
    partialImages,
    ...(responseFormat === undefined ? {} : { responseFormat }),
    ...(outputFormat === undefined ? {} : { outputFormat }),
    ...(background === undefined ? {} : { background }),
  };
}

/** `POST /v1/images/generations`: the request, or OpenAI's 400 for what it would refuse. */
export function decodeImageGenerationRequest(body: unknown): ImageGenerationRequest {
  if (!isRecord(body)) throw new InvalidRequestError(`Invalid type for request body: expected an object, but got ${Array.isArray(body) ? 'an array' : typeof body} instead.`, null, 'invalid_type');
  for (const key of Object.keys(body)) if (!GENERATION_FIELDS.has(key)) throw unknownParameter(key);
  const read = readJson(body);
  optionalEnum(read('moderation', 'string'), 'moderation', ['low', 'auto'] as const);
  optionalEnum(read('style', 'string'), 'style', ['vivid', 'natural'] as const);
  return decodeCommon(read);
}

/**
 * `POST /v1/images/edits`: the request from the form's text fields (one value each, unknown names
 * refused by the caller with IMAGE_EDIT_*_FIELDS) and its files; a 400 when no image came.
 */
export function decodeImageEditRequest(texts: ReadonlyMap<string, string>, images: readonly ImageFile[], mask: ImageFile | undefined): ImageEditRequest {
  for (const key of texts.keys()) if (!IMAGE_EDIT_TEXT_FIELDS.has(key)) throw unknownParameter(key);
  const read = readForm(texts);
  optionalEnum(read('input_fidelity', 'string'), 'input_fidelity', ['high', 'low'] as const);
  const request = decodeCommon(read);
  if (images.length === 0) throw missingParameter('image');
  return { ...request, images, ...(mask === undefined ? {} : { mask }) };
}

/** The files an edit sends the model: its images, and its mask. */
export function inputImageCount(request: ImageGenerationRequest | ImageEditRequest): number {
  return 'images' in request ? request.images.length + (request.mask === undefined ? 0 : 1) : 0;
}

/**
 * The gateway's own count of the input, billed only when a token-priced upstream reports none:
 * the prompt's tokens, and a flat allowance (TOKENS_PER_IMAGE) per input image.
 */
export function* countImageInputTokens(request: ImageGenerationRequest | ImageEditRequest): Generator<void, number> {
  return inputImageCount(request) * TOKENS_PER_IMAGE + (yield* countTexts([request.prompt]));
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * The usage a GPT image model reports (`usage` of the answer, or of the `completed` event):
 * `input_tokens` (text and images), `input_tokens_details.image_tokens` billed at the image input
 * price, `output_tokens`. Undefined when there is none, or it is not whole non-negative counts.
 */
export function usageOfImageAnswer(answer: Readonly<Record<string, unknown>>): Usage | undefined {
  const usage = answer.usage;
  if (!isRecord(usage)) return undefined;
  const inputTokens = count(usage.input_tokens);
  const outputTokens = count(usage.output_tokens);
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  const details = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
  const imageInputTokens = count(details.image_tokens);
  return { inputTokens, cachedInputTokens: 0, outputTokens, reasoningTokens: 0, ...(imageInputTokens === undefined ? {} : { imageInputTokens }) };
}

/** The size and quality an answer says it made (GPT image models echo them), else the request's. */
export function chosenImageTier(answer: Readonly<Record<string, unknown>>, request: ImageGenerationRequest): { size: string; quality: string } {
  return {
    size: typeof answer.size === 'string' ? answer.size : request.size,
    quality: typeof answer.quality === 'string' ? answer.quality : request.quality,
  };
}

/** The SSE event types of a streamed answer, by endpoint (§8.4). */
export function imageEventTypes(edit: boolean): { partial: string; completed: string } {
  const prefix = edit ? 'image_edit' : 'image_generation';
  return { partial: `${prefix}.partial_image`, completed: `${prefix}.completed` };
}
