/**
 * Decodes and validates a client's POST /v1/chat/completions body into the canonical request.
 * Wire format: docs/wire-protocols.md §1.1; https://platform.openai.com/docs/api-reference/chat/create
 *
 * Every top-level key falls into one of three groups: read into the canonical request, validated and
 * left to the body (a same-protocol passthrough forwards it; translated upstreams drop it), or known
 * to OpenAI but refused here. Anything else is refused as unrecognized, as OpenAI does. Problems are
 * thrown as `InvalidRequestError` in OpenAI's wording (../field-checks.ts).
 */
import { InvalidRequestError, type CanonicalRequest } from '../canonical.js';
import { decodeMessages } from './decode-messages.js';
import { decodeResponseFormat, decodeToolChoice, decodeTools } from './decode-tools.js';
import {
  arrayTooLong,
  describeType,
  invalidType,
  invalidValue,
  isRecord,
  type JsonRecord,
  missingParameter,
  emptyString,
  optionalArray,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalNumber,
  optionalRecord,
  optionalString,
  unknownParameter,
  unsupportedParameter,
  unsupportedValue,
} from '../field-checks.js';
import { memberPath } from '../client-echo.js';
import { decodeMetadata } from '../metadata.js';
import { checkServiceTier } from '../service-tier.js';

/** The decoded request plus what only the Chat encoder needs. */
export interface DecodedChatRequest {
  request: CanonicalRequest;
  /** `stream_options.include_usage`: whether the client wants the final usage chunk. */
  includeUsage: boolean;
}

/** Keys read into the canonical request. */
const CANONICAL_KEYS = [
  'model',
  'messages',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'stream',
  'stream_options',
  'max_completion_tokens',
  'max_tokens',
  'temperature',
  'top_p',
  'response_format',
] as const;

/** Keys OpenAI accepts that the canonical model does not carry: validated, otherwise left alone. */
const BODY_ONLY_KEYS = [
  'n',
  'stop',
  'seed',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'presence_penalty',
  'frequency_penalty',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'metadata',
  'store',
  'service_tier',
  'verbosity',
  'modalities',
  'prediction',
  'web_search_options',
] as const;

const REASONING_MESSAGE =
  "Reasoning effort cannot be configured on /v1/chat/completions; use /v1/responses with 'reasoning.effort' instead.";

/** Keys OpenAI knows that Tollgate refuses, with the reason given to the client. */
const REFUSED_KEYS: Readonly<Record<string, string>> = {
  // The spec (docs/contract.md §1, §4.2) keeps reasoning effort to the Responses endpoint.
  reasoning_effort: REASONING_MESSAGE,
  reasoning: REASONING_MESSAGE,
  functions: "Unsupported parameter: 'functions' is deprecated and not supported; use 'tools' instead.",
  function_call: "Unsupported parameter: 'function_call' is deprecated and not supported; use 'tool_choice' instead.",
  audio: "Unsupported parameter: 'audio' output is not supported on this gateway.",
  moderation: "Unsupported parameter: 'moderation' is not supported on this gateway.",
};

const KNOWN_KEYS: ReadonlySet<string> = new Set<string>([...CANONICAL_KEYS, ...BODY_ONLY_KEYS, ...Object.keys(REFUSED_KEYS)]);

const MAXIMUM_STOP_SEQUENCES = 4;

/** Validates a parsed JSON body and maps it to the canonical request; throws `InvalidRequestError`. */
export function decodeChatRequest(body: unknown): DecodedChatRequest {
  if (!isRecord(body)) {
    throw new InvalidRequestError(`Invalid type for request body: expected an object, but got ${describeType(body)} instead.`, null, 'invalid_type');
  }
  checkKeys(body);

  const model = body.model;
  if (model === undefined || model === null) throw missingParameter('model');
  if (typeof model !== 'string') throw invalidType('model', 'a string', model);
  if (model === '') throw emptyString('model');

  const messages = body.messages;
  if (messages === undefined || messages === null) throw missingParameter('messages');
  if (!Array.isArray(messages)) throw invalidType('messages', 'an array', messages);
  const input = decodeMessages(messages);

  const tools = decodeTools(body.tools);
  const toolChoice = decodeToolChoice(body.tool_choice, tools);
  const parallelToolCalls = optionalBoolean(body.parallel_tool_calls, 'parallel_tool_calls');

  const stream = optionalBoolean(body.stream, 'stream') ?? false;
  const includeUsage = decodeStreamOptions(body, stream);

  const maxCompletionTokens = optionalInteger(body.max_completion_tokens, 'max_completion_tokens', { minimum: 1 });
  const maxTokens = optionalInteger(body.max_tokens, 'max_tokens', { minimum: 1 });
  const temperature = optionalNumber(body.temperature, 'temperature', { minimum: 0, maximum: 2 });
  const topP = optionalNumber(body.top_p, 'top_p', { minimum: 0, maximum: 1 });
  const responseFormat = decodeResponseFormat(body);

  checkBodyOnlyFields(body);

  const request: CanonicalRequest = { model, input, tools, toolChoice, stream };
  if (parallelToolCalls !== undefined) request.parallelToolCalls = parallelToolCalls;
  // max_tokens is the deprecated spelling; the current field wins when both are sent.
  const maxOutputTokens = maxCompletionTokens ?? maxTokens;
  if (maxOutputTokens !== undefined) request.maxOutputTokens = maxOutputTokens;
  if (temperature !== undefined) request.temperature = temperature;
  if (topP !== undefined) request.topP = topP;
  if (responseFormat !== undefined) request.responseFormat = responseFormat;
  const promptCacheKey = optionalString(body.prompt_cache_key, 'prompt_cache_key');
  if (promptCacheKey !== undefined) request.promptCacheKey = promptCacheKey;
  return { request, includeUsage };
}

/** Refuses unknown keys and the known ones Tollgate does not serve (a null value counts as absent). */
function checkKeys(body: JsonRecord): void {
  for (const key of Object.keys(body)) {
    if (!KNOWN_KEYS.has(key)) {
      throw unknownParameter(key);
    }
    const refusal = REFUSED_KEYS[key];
    if (refusal !== undefined && body[key] !== null && body[key] !== undefined) throw unsupportedParameter(key, refusal);
  }
}

/** Returns `include_usage`; `stream_options` is only valid on a streaming request, as on OpenAI. */
function decodeStreamOptions(body: JsonRecord, stream: boolean): boolean {
  const options = optionalRecord(body.stream_options, 'stream_options');
  if (options === undefined) return false;
  if (!stream) {
    throw new InvalidRequestError("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', 'invalid_value');
  }
  optionalBoolean(options.include_obfuscation, 'stream_options.include_obfuscation');
  return optionalBoolean(options.include_usage, 'stream_options.include_usage') ?? false;
}

/** Shape checks for the fields that only travel in the body, so a bad value fails here and not upstream. */
function checkBodyOnlyFields(body: JsonRecord): void {
  const n = optionalInteger(body.n, 'n', { minimum: 1 });
  if (n !== undefined && n > 1) {
    // The canonical stream carries one choice; several would need one upstream call each.
    throw unsupportedValue('n', `Unsupported value: 'n' must be 1; generating ${n} choices is not supported.`);
  }
  checkStop(body.stop);
  optionalInteger(body.seed, 'seed');
  optionalBoolean(body.logprobs, 'logprobs');
  optionalInteger(body.top_logprobs, 'top_logprobs', { minimum: 0, maximum: 20 });
  checkLogitBias(body);
  optionalNumber(body.presence_penalty, 'presence_penalty', { minimum: -2, maximum: 2 });
  optionalNumber(body.frequency_penalty, 'frequency_penalty', { minimum: -2, maximum: 2 });
  for (const key of ['user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention']) {
    optionalString(body[key], key);
  }
  checkServiceTier(body.service_tier);
  optionalRecord(body.prompt_cache_options, 'prompt_cache_options');
  // Chat names a too-long key's param `metadata`; the pairs themselves travel in the body.
  decodeMetadata(body.metadata, () => 'metadata');
  optionalBoolean(body.store, 'store');
  optionalEnum(body.verbosity, 'verbosity', ['low', 'medium', 'high']);
  checkModalities(body);
  optionalRecord(body.prediction, 'prediction');
  if (body.web_search_options !== undefined && body.web_search_options !== null) {
    // The upstream bills its searches apart from tokens, which Tollgate cannot see or charge.
    throw unsupportedParameter('web_search_options', "Unsupported parameter: 'web_search_options' is not available through this gateway.");
  }
}

function checkStop(stop: unknown): void {
  if (stop === undefined || stop === null || typeof stop === 'string') return;
  if (!Array.isArray(stop)) throw invalidType('stop', 'one of a string or array of strings', stop);
  if (stop.length > MAXIMUM_STOP_SEQUENCES) throw arrayTooLong('stop', MAXIMUM_STOP_SEQUENCES, stop.length);
  stop.forEach((sequence, index) => {
    if (typeof sequence !== 'string') throw invalidType(`stop[${index}]`, 'a string', sequence);
  });
}

function checkLogitBias(body: JsonRecord): void {
  const bias = optionalRecord(body.logit_bias, 'logit_bias');
  if (bias === undefined) return;
  for (const token of Object.keys(bias)) {
    optionalNumber(bias[token], memberPath('logit_bias', token), { minimum: -100, maximum: 100 });
  }
}

function checkModalities(body: JsonRecord): void {
  const modalities = optionalArray(body.modalities, 'modalities');
  if (modalities === undefined) return;
  modalities.forEach((modality, index) => {
    const param = `modalities[${index}]`;
    if (typeof modality !== 'string') throw invalidType(param, 'a string', modality);
    if (modality !== 'text' && modality !== 'audio') throw invalidValue(param, modality, ['text', 'audio']);
    // Audio output has no place in the canonical stream.
    if (modality === 'audio') throw unsupportedValue(param, "Unsupported value: 'modalities' may only contain 'text' on this gateway.");
  });
}
