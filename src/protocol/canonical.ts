/**
 * The canonical request and stream-event model. Every client surface decodes into it and every
 * provider translates from it (hub and spoke, ARCHITECTURE.md). It is item-based like the
 * Responses API; Chat Completions maps into it. Pure types: no I/O, no imports of ours.
 */

/** The client surfaces Tollgate serves: OpenAI's two, and Anthropic's Messages API. */
export type Surface = 'responses' | 'chat-completions' | 'anthropic-messages';

/** Reasoning effort values accepted on /v1/responses (spec §4.1). */
export const REASONING_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

export type MessageRole = 'system' | 'developer' | 'user' | 'assistant';

/** A part of a message's content. */
export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; url: string; detail?: 'auto' | 'low' | 'high' }
  | { type: 'refusal'; refusal: string };

/** One item of the conversation sent to the model. */
export type InputItem =
  | { type: 'message'; role: MessageRole; content: ContentPart[] }
  /** A call the model made earlier; `callId` joins it to its output. */
  | { type: 'function_call'; callId: string; name: string; arguments: string }
  | { type: 'function_call_output'; callId: string; output: string };

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
  input: InputItem[];
  tools: FunctionTool[];
  toolChoice: ToolChoice;
  parallelToolCalls?: boolean;
  /** The client's own cap on output tokens (reasoning included), if it set one. */
  maxOutputTokens?: number;
  reasoningEffort?: ReasoningEffort;
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
}

export const ZERO_USAGE: Usage = Object.freeze({ inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 });

/** Why the model stopped, in Chat Completions terms. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/**
 * A canonical stream event. Providers yield them in this order: one `response-start`, then any mix
 * of deltas (tool calls are opened by `tool-call-start` and closed by `tool-call-end`), then `usage`
 * (when known) and `finish`. A failure after `response-start` is an `error` event, and the stream ends.
 */
export type CanonicalEvent =
  | { type: 'response-start'; upstreamModel: string }
  | { type: 'text-delta'; delta: string }
  | { type: 'reasoning-delta'; delta: string }
  | { type: 'tool-call-start'; index: number; callId: string; name: string }
  | { type: 'tool-call-delta'; index: number; delta: string }
  | { type: 'tool-call-end'; index: number }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; reason: FinishReason }
  | { type: 'error'; code: string; message: string };

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
