/**
 * Decodes a POST /v1/responses body (already parsed JSON) into the canonical request, validating
 * every field we accept and answering anything wrong the way OpenAI does (message, `param` path,
 * `code`). Field list: https://platform.openai.com/docs/api-reference/responses/create
 * (docs/wire-protocols.md §2.1). Unknown top-level fields are refused, as OpenAI refuses them.
 */
import { InvalidRequestError, LIGHT_EFFORTS, REASONING_EFFORTS, type CanonicalRequest, type RequestedEffort, type ResponseFormat } from '../canonical.js';
import { decodeInputItems } from './decode-input.js';
import { addToolList, decodeToolChoice, decodeTools } from './decode-tools.js';
import { decodeName } from './tool-names.js';
import {
  describeType,
  invalidType,
  isRecord,
  missingParameter,
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
  type JsonRecord,
} from '../field-checks.js';
import { memberPath } from '../client-echo.js';
import { decodeMetadata } from '../metadata.js';
import { checkServiceTier } from '../service-tier.js';
import { requireEnum } from './required-fields.js';
import { DEFAULT_ECHO, REASONING_SUMMARIES, TRUNCATIONS, VERBOSITIES, type ResponsesEcho } from './response-settings.js';

/** What a Responses body decodes to: the canonical request plus what only the gateway acts on. */
export interface DecodedResponsesBody {
  request: CanonicalRequest;
  /** Whether to persist the response for GET and `previous_response_id` (default true). */
  store: boolean;
  /** The stored response this one continues; resolving it is the caller's job. */
  previousResponseId: string | null;
  /** At most 16 string pairs, stored and echoed. */
  metadata: Record<string, string>;
  /** Settings without a canonical slot that the response object echoes (pass to the encoder). */
  echo: ResponsesEcho;
  /** The input ended with a `compaction_trigger`: the answer is one `compaction` item (compaction.ts). */
  compact: boolean;
}

/** The `include` values OpenAI documents; we accept them all and honour none that need hosted tools. */
const INCLUDABLES = [
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
] as const;

/** The Responses codec words a number's invalid-type message "expected a number" (Chat: "a decimal"). */
const NUMBER = 'a number';

const KNOWN_FIELDS = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens',
  'temperature', 'top_p', 'reasoning', 'text', 'stream', 'store', 'metadata', 'previous_response_id',
  'user', 'safety_identifier', 'prompt_cache_key', 'service_tier', 'truncation', 'include',
  'stream_options', 'top_logprobs', 'background', 'conversation', 'prompt', 'client_metadata',
]);

/** Decodes and validates a Responses body; throws {@link InvalidRequestError} for anything wrong. */
export function decodeResponsesBody(body: unknown): DecodedResponsesBody {
  if (!isRecord(body)) {
    throw new InvalidRequestError(`Invalid request body: expected a JSON object, but got ${describeType(body)} instead.`, null, 'invalid_type');
  }
  for (const key of Object.keys(body)) {
    if (!KNOWN_FIELDS.has(key)) {
      throw unknownParameter(key);
    }
  }
  refuseUnsupported(body);

  const model = body.model;
  if (model === undefined || model === null || model === '') throw missingParameter('model');
  if (typeof model !== 'string') throw invalidType('model', 'a string', model);

  const declared = decodeTools(body.tools);
  const input = decodeInputItems(body.input);
  // Tools a client lists in its input (Codex does for some models) join the request's tools.
  for (const list of input.toolLists) addToolList(declared, list.tools, list.path, 'keep-first');
  const request: CanonicalRequest = {
    model,
    input: input.items,
    tools: declared.tools,
    toolChoice: decodeToolChoice(body.tool_choice, declared.tools),
    stream: optionalBoolean(body.stream, 'stream') ?? false,
  };
  if (declared.hostedTools.length > 0) request.hostedTools = declared.hostedTools;
  if (input.opaque.length > 0) request.opaqueInput = input.opaque;
  const instructions = optionalString(body.instructions, 'instructions');
  if (instructions !== undefined) request.instructions = instructions;
  const parallelToolCalls = optionalBoolean(body.parallel_tool_calls, 'parallel_tool_calls');
  if (parallelToolCalls !== undefined) request.parallelToolCalls = parallelToolCalls;
  // OpenAI's floor is 16; ours is 1 because a provider can honour any positive cap.
  const maxOutputTokens = optionalInteger(body.max_output_tokens, 'max_output_tokens', { minimum: 1 });
  if (maxOutputTokens !== undefined) request.maxOutputTokens = maxOutputTokens;
  const temperature = optionalNumber(body.temperature, 'temperature', { minimum: 0, maximum: 2 }, NUMBER);
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optionalNumber(body.top_p, 'top_p', { minimum: 0, maximum: 1 }, NUMBER);
  if (topP !== undefined) request.topP = topP;

  const reasoning = decodeReasoning(body.reasoning);
  if (reasoning.effort !== undefined) request.reasoningEffort = reasoning.effort;
  const text = decodeText(body.text);
  if (text.format !== undefined) request.responseFormat = text.format;
  const promptCacheKey = optionalString(body.prompt_cache_key, 'prompt_cache_key');
  if (promptCacheKey !== undefined) request.promptCacheKey = promptCacheKey;

  decodeStreamOptions(body.stream_options);
  decodeInclude(body.include);
  checkServiceTier(body.service_tier);
  decodeClientMetadata(body.client_metadata);

  const echo: ResponsesEcho = {
    ...DEFAULT_ECHO,
    user: optionalString(body.user, 'user') ?? null,
    truncation: optionalEnum(body.truncation, 'truncation', TRUNCATIONS) ?? DEFAULT_ECHO.truncation,
    reasoningSummary: reasoning.summary,
    verbosity: text.verbosity ?? DEFAULT_ECHO.verbosity,
    topLogprobs: optionalInteger(body.top_logprobs, 'top_logprobs', { minimum: 0, maximum: 20 }) ?? DEFAULT_ECHO.topLogprobs,
    promptCacheKey: optionalString(body.prompt_cache_key, 'prompt_cache_key') ?? null,
    safetyIdentifier: optionalString(body.safety_identifier, 'safety_identifier', 64) ?? null,
  };
  // Namespaces and hosted tools have no canonical echo: the client's own list is echoed.
  if (declared.hostedTools.length > 0 || declared.tools.some((tool) => tool.declared !== undefined)) echo.toolsAsSent = Array.isArray(body.tools) ? body.tools : [];

  const previousResponseId = optionalString(body.previous_response_id, 'previous_response_id') ?? null;
  return {
    request,
    store: optionalBoolean(body.store, 'store') ?? true,
    previousResponseId,
    metadata: decodeMetadata(body.metadata, (key) => memberPath('metadata', key)),
    echo,
    compact: input.compactionTrigger,
  };
}

/** The canonical request alone; see {@link decodeResponsesBody} for the gateway-only fields. */
export function decodeResponsesRequest(body: unknown): CanonicalRequest {
  return decodeResponsesBody(body).request;
}

/** Real OpenAI parameters that need state or services Tollgate does not have. */
function refuseUnsupported(body: JsonRecord): void {
  if (body.conversation !== undefined && body.conversation !== null) {
    throw unsupportedParameter('conversation', "The 'conversation' parameter is not supported; use 'previous_response_id' to continue a response.");
  }
  if (body.prompt !== undefined && body.prompt !== null) {
    throw unsupportedParameter('prompt', "The 'prompt' parameter (stored prompt templates) is not supported.");
  }
  if (optionalBoolean(body.background, 'background') === true) {
    throw unsupportedValue('background', "Background responses ('background': true) are not supported.");
  }
}

/** OpenAI's lighter two (canonical.ts, LIGHT_EFFORTS), then the contract's five: OpenAI's order. */
const REQUESTABLE_EFFORTS = [...LIGHT_EFFORTS, ...REASONING_EFFORTS] as const;

function decodeReasoning(value: unknown): { effort?: RequestedEffort; summary: ResponsesEcho['reasoningSummary'] } {
  const reasoning = optionalRecord(value, 'reasoning');
  if (reasoning === undefined) return { summary: null };
  const effort = optionalEnum(reasoning.effort, 'reasoning.effort', REQUESTABLE_EFFORTS);
  // `generate_summary` is the deprecated name of `summary`.
  const summary =
    optionalEnum(reasoning.summary, 'reasoning.summary', REASONING_SUMMARIES) ??
    optionalEnum(reasoning.generate_summary, 'reasoning.generate_summary', REASONING_SUMMARIES) ??
    null;
  return effort === undefined ? { summary } : { effort, summary };
}

function decodeText(value: unknown): { format?: ResponseFormat; verbosity?: ResponsesEcho['verbosity'] } {
  const text = optionalRecord(value, 'text');
  if (text === undefined) return {};
  const verbosity = optionalEnum(text.verbosity, 'text.verbosity', VERBOSITIES);
  const format = decodeFormat(text.format);
  return {
    ...(format === undefined ? {} : { format }),
    ...(verbosity === undefined ? {} : { verbosity }),
  };
}

function decodeFormat(value: unknown): ResponseFormat | undefined {
  const format = optionalRecord(value, 'text.format');
  if (format === undefined) return undefined;
  const type = requireEnum(format.type, 'text.format.type', ['text', 'json_object', 'json_schema']);
  if (type === 'text') return { type: 'text' };
  if (type === 'json_object') return { type: 'json_object' };
  const name = decodeName(format.name, 'text.format.name');
  if (format.schema === undefined || format.schema === null) throw missingParameter('text.format.schema');
  const schema = optionalRecord(format.schema, 'text.format.schema') ?? {};
  const result: ResponseFormat = { type: 'json_schema', name, schema };
  const strict = optionalBoolean(format.strict, 'text.format.strict');
  if (strict !== undefined) result.strict = strict;
  const description = optionalString(format.description, 'text.format.description');
  if (description !== undefined) result.description = description;
  return result;
}

function decodeStreamOptions(value: unknown): void {
  const options = optionalRecord(value, 'stream_options');
  if (options === undefined) return;
  optionalBoolean(options.include_obfuscation, 'stream_options.include_obfuscation');
}

/**
 * String pairs the Codex CLI sends on every request (session, turn and installation ids). Only
 * OpenAI acts on them: a same-protocol route forwards them, a translated route drops them.
 */
function decodeClientMetadata(value: unknown): void {
  const metadata = optionalRecord(value, 'client_metadata');
  if (metadata === undefined) return;
  for (const [key, entry] of Object.entries(metadata)) optionalString(entry, memberPath('client_metadata', key));
}

function decodeInclude(value: unknown): void {
  const include = optionalArray(value, 'include') ?? [];
  include.forEach((entry, index) => requireEnum(entry, `include[${index}]`, INCLUDABLES));
}
