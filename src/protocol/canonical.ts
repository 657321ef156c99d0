/**
 * The canonical request and stream-event model. Every client surface decodes into it and every
 * provider translates from it (hub and spoke, docs/architecture.md). It is item-based like the
 * Responses API; Chat Completions maps into it. Pure types: no I/O, no imports of ours.
 */

/** The client surfaces Tollgate serves: OpenAI's two, and Anthropic's Messages API. */
/** The generative surfaces: those whose answers are canonical events (this file's request and events). */
export const GENERATIVE_SURFACES = ['responses', 'chat-completions', 'anthropic-messages'] as const;
/** Every `/v1` creation endpoint a catalog model may serve (its `endpoints`). */
export const SURFACES = [
  ...GENERATIVE_SURFACES,
  'embeddings',
  'moderations',
  'speech',
  'image-generations',
  'image-edits',
  'transcriptions',
  'translations',
] as const;
export type Surface = (typeof SURFACES)[number];

/** The path of each endpoint, as clients call it (and as operators know it, in the console). */
export const SURFACE_PATHS: Readonly<Record<Surface, string>> = Object.freeze({
  responses: '/v1/responses',
  'chat-completions': '/v1/chat/completions',
  'anthropic-messages': '/v1/messages',
  embeddings: '/v1/embeddings',
  moderations: '/v1/moderations',
  speech: '/v1/audio/speech',
  'image-generations': '/v1/images/generations',
  'image-edits': '/v1/images/edits',
  transcriptions: '/v1/audio/transcriptions',
  translations: '/v1/audio/translations',
});

/** The endpoints whose request is a multipart upload (a file and fields), not JSON. */
export const UPLOAD_SURFACES = ['image-edits', 'transcriptions', 'translations'] as const satisfies readonly Surface[];
export type UploadSurface = (typeof UPLOAD_SURFACES)[number];

/** Reasoning effort values accepted on /v1/responses (docs/contract.md §4.1), each listed per model in the catalog. */
export const REASONING_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/**
 * OpenAI's lighter efforts for reasoning models, which its clients send by default (the Agents SDK
 * sends `none` for gpt-5.x): accepted beside the contract's five on every route, for every model
 * that reasons (`none` for any model). `none` is no thinking; `minimal` the least each upstream
 * has (README, "Reasoning effort").
 */
export const LIGHT_EFFORTS = ['none', 'minimal'] as const;
export type LightEffort = (typeof LIGHT_EFFORTS)[number];
/** An effort as a request may ask it. */
export type RequestedEffort = ReasoningEffort | LightEffort;

export type MessageRole = 'system' | 'developer' | 'user' | 'assistant';

/**
 * A prompt-cache breakpoint (docs/wire-protocols.md §21): the prompt up to and including what
 * carries it may be cached. Only Anthropic's Messages surface can place one (its `cache_control`);
 * Anthropic and Bedrock upstreams send them on (`cache_control`, `cachePoint`). `ttl` is
 * Anthropic's lifetime: 5 minutes when absent.
 */
export interface CacheBreakpoint {
  ttl?: '5m' | '1h';
}

/** A part of a message's content; `cache` marks a breakpoint after it. */
export type ContentPart =
  | { type: 'text'; text: string; cache?: CacheBreakpoint }
  | { type: 'image'; url: string; detail?: 'auto' | 'low' | 'high'; cache?: CacheBreakpoint }
  | { type: 'refusal'; refusal: string; cache?: CacheBreakpoint };

/** One item of the conversation sent to the model; `cache` marks a breakpoint after a call or its output. */
export type InputItem =
  | { type: 'message'; role: MessageRole; content: ContentPart[] }
  /** A call the model made earlier; `callId` joins it to its output. */
  | { type: 'function_call'; callId: string; name: string; arguments: string; cache?: CacheBreakpoint }
  | { type: 'function_call_output'; callId: string; output: string; cache?: CacheBreakpoint };

/** A function the model may call. `parameters` is a JSON Schema object. */
export interface FunctionTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  strict?: boolean;
  /**
   * Present when the client declared a free-form tool (Responses `{"type": "custom"}`), whose input
   * is one string rather than JSON arguments. Upstreams see an ordinary function whose only
   * parameter, the string `input`, carries that text (`parameters` says so); the client gets the
   * call back as a `custom_tool_call` whose `input` is that string. `format` is the client's input
   * format as given (`{type: "text"}` or a lark/regex grammar), kept for the echo.
   */
  custom?: { format?: Record<string, unknown> };
  /**
   * Present when the client declared the tool inside a Responses `namespace` tool. `name` above is
   * then the flattened name upstreams see (see responses/tool-names.ts); a call comes back to the
   * client under the declared namespace and name.
   */
  declared?: { namespace: string; name: string };
  /** A prompt-cache breakpoint after this tool (the tools come first in Anthropic's prompt). */
  cache?: CacheBreakpoint;
}

/**
 * A tool the gateway does not run or translate as a function: a Responses hosted tool
 * (`web_search`, `tool_search`, `file_search`, …), one of Anthropic's server tools
 * (`web_search_20250305`, `code_execution_…`, …) or a type that did not exist when this was
 * written. An upstream of the client's own wire gets `raw` as the client sent it; a translated
 * route maps a web search to the upstream's own where the catalog allows that, and otherwise drops
 * it (or the model refuses it) (docs/wire-protocols.md §3.4).
 */
export interface HostedTool {
  type: string;
  raw: Readonly<Record<string, unknown>>;
  /** Where the client declared it (`tools[3]`, `input[0].tools[1]`), for a refusal's `param`. */
  param: string;
  /** The wire `raw` is written in: absent for Responses, `anthropic` for an Anthropic server tool. */
  wire?: 'anthropic';
}

/** What translated routes do with hosted tools they cannot run (catalog `hosted_tools`). */
export type HostedToolPolicy = 'drop' | 'refuse' | 'map';

/**
 * An input item the gateway has no canonical form for (hosted-tool calls, compaction items, types
 * that do not exist yet). A Responses upstream gets `raw` back at `index` (its place among the
 * canonical items); translated routes leave it out, as they leave out reasoning items.
 */
export interface OpaqueInputItem {
  index: number;
  raw: Readonly<Record<string, unknown>>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

/** A request in canonical form, as decoded from either surface. */
export interface CanonicalRequest {
  /** The client-facing model id (catalog id), not the upstream's name for it. */
  model: string;
  /** System instructions placed before everything else (Responses `instructions`). */
  instructions?: string;
  /** A prompt-cache breakpoint after `instructions` (an Anthropic client's marked `system`). */
  instructionsCache?: CacheBreakpoint;
  /**
   * Whether the client's surface places prompt-cache breakpoints itself (Anthropic Messages): the
   * `cache` markers are then all it wants, none included. Absent (OpenAI's surfaces, which cannot
   * say), upstreams whose cache needs breakpoints get the gateway's own (see CacheBreakpoint).
   */
  cacheMarked?: boolean;
  /** The client's `prompt_cache_key` (OpenAI's surfaces), sent on to OpenAI upstreams. */
  promptCacheKey?: string;
  input: InputItem[];
  tools: FunctionTool[];
  /** Hosted and unknown tools (Responses), server tools (Anthropic Messages); absent when there are none. */
  hostedTools?: HostedTool[];
  /**
   * Whether a translated route may map hosted tools to its own equivalents (catalog
   * `hosted_tools: map`); set by the gateway once the model is known.
   */
  mapHostedTools?: boolean;
  /** Input items kept only for Responses upstreams (Responses only); absent when there are none. */
  opaqueInput?: OpaqueInputItem[];
  toolChoice: ToolChoice;
  parallelToolCalls?: boolean;
  /** The client's own cap on output tokens (reasoning included), if it set one. */
  maxOutputTokens?: number;
  reasoningEffort?: RequestedEffort;
  temperature?: number;
  topP?: number;
  responseFormat?: ResponseFormat;
  stream: boolean;
}

/**
 * Token usage. `outputTokens` includes `reasoningTokens`; `inputTokens` includes `cachedInputTokens`
 * and `cacheWriteInputTokens`.
 */
export interface Usage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  /**
   * Input tokens the upstream wrote to its prompt cache (Anthropic's `cache_creation_input_tokens`),
   * billed at the model's `cache_write` price. Absent means 0: only Anthropic reports it.
   */
  cacheWriteInputTokens?: number;
  /**
   * Input tokens that were images (gpt-image's `input_tokens_details.image_tokens`), part of
   * `inputTokens`, billed at the model's `image_input` price. Absent means 0.
   */
  imageInputTokens?: number;
  /** What is billed per unit rather than per token (images, seconds of audio, characters). */
  units?: PricedUnits;
}

/**
 * Units priced each (docs/architecture.md, Money), all integers: images made at the model's price
 * for their tier (`<size>/<quality>`, billing/prices.ts), milliseconds of input audio at its price
 * per second, characters of text spoken at its price per 1M characters.
 */
export interface PricedUnits {
  images?: number;
  /** The tier of `images`: the price key they are billed at. */
  imageTier?: string;
  audioMilliseconds?: number;
  characters?: number;
}

/**
 * What an upstream reports of the input before it answers (Anthropic's `message_start`): billed
 * for an answer that ends without a whole report, instead of the gateway's own count.
 */
export type InputUsage = Pick<Usage, 'inputTokens' | 'cachedInputTokens' | 'cacheWriteInputTokens'>;

export const ZERO_USAGE: Usage = Object.freeze({ inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 });

/** The most tokens a sane report claims in one field: no model reads or writes more in one answer. */
export const MAX_REPORTED_TOKENS = 2_147_483_647;

/**
 * Whether an upstream's usage report can be believed: whole, non-negative, bounded counts. The
 * usage meter bills a sane report as is and counts the output itself otherwise, so a provider may
 * leave out the output events of a whole answer whose report is sane.
 */
export function isSaneUsage(usage: Usage): boolean {
  return [usage.inputTokens, usage.cachedInputTokens, usage.outputTokens, usage.reasoningTokens].every(
    (count) => Number.isSafeInteger(count) && count >= 0 && count <= MAX_REPORTED_TOKENS,
  );
}

/** Why the model stopped, in Chat Completions terms. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/**
 * A canonical stream event. Providers yield them in this order: one `response-start`, then any mix
 * of deltas (tool calls are opened by `tool-call-start` and closed by `tool-call-end`), then `usage`
 * (when known) and `finish`. An upstream that says what it read before it answers sends
 * `input-usage` early (only the meter reads it). A failure after `response-start` is an `error`
 * event, and the stream ends.
 */
export type CanonicalEvent =
  | { type: 'response-start'; upstreamModel: string }
  | { type: 'text-delta'; delta: string }
  | { type: 'reasoning-delta'; delta: string }
  | { type: 'tool-call-start'; index: number; callId: string; name: string }
  | { type: 'tool-call-delta'; index: number; delta: string }
  | { type: 'tool-call-end'; index: number }
  /**
   * The upstream ran a web search of its own (a hosted tool the catalog mapped) for `query`, done
   * by the time it is told. Only Responses clients see it (a `web_search_call` item); the others
   * get the answer's text alone (docs/wire-protocols.md §3.4).
   */
  | { type: 'web-search'; query: string }
  | { type: 'usage'; usage: Usage }
  | { type: 'input-usage'; usage: InputUsage }
  | { type: 'finish'; reason: FinishReason }
  /**
   * The answer failed. `upstreamCode` is the code the upstream's own failure said (OpenAI's
   * `error.code`, Anthropic's `error.type`), when it said one: what a client reads where the
   * failure is passed through as the upstream wrote it.
   */
  | { type: 'error'; code: string; message: string; upstreamCode?: string };

/**
 * A 400-class problem with the client's request found while decoding it. `param` names the field
 * in the client's own terms (`messages[2].role`, `reasoning.effort`), OpenAI style.
 */
export class InvalidRequestError extends Error {
  readonly param: string | null;
  readonly code: string | null;
  constructor(message: string, param: string | null, code: string | null = 'invalid_value') {
    super(message);
    this.name = 'InvalidRequestError';
    this.param = param;
    this.code = code;
  }
}
