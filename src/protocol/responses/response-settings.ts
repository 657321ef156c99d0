/**
 * The settings a Responses object echoes back (docs/wire-protocols.md §2.4: "the settings fields echo the
 * effective request"), and the usage block. Kept apart from the encoder's state machine so the
 * decoder and the encoder share one definition of what is echoed.
 * https://platform.openai.com/docs/api-reference/responses/object
 */
import type { CanonicalRequest, ResponseFormat, ToolChoice, Usage } from '../canonical.js';

export const REASONING_SUMMARIES = ['auto', 'concise', 'detailed'] as const;
export const VERBOSITIES = ['low', 'medium', 'high'] as const;
export const TRUNCATIONS = ['auto', 'disabled'] as const;

/**
 * Request fields with no canonical slot that the response object still echoes. The decoder fills
 * them from the client body; the encoder takes them as is.
 */
export interface ResponsesEcho {
  user: string | null;
  truncation: (typeof TRUNCATIONS)[number];
  reasoningSummary: (typeof REASONING_SUMMARIES)[number] | null;
  verbosity: (typeof VERBOSITIES)[number];
  topLogprobs: number;
  promptCacheKey: string | null;
  safetyIdentifier: string | null;
  /**
   * The client's `tools` as sent, echoed as they are when they hold tools the canonical request
   * keeps apart (namespaces, hosted tools, tools listed in the input); absent: `request.tools`.
   */
  toolsAsSent?: readonly unknown[];
}

/** OpenAI's defaults for requests that leave the fields out. */
export const DEFAULT_ECHO: Readonly<ResponsesEcho> = Object.freeze({
  user: null,
  truncation: 'disabled',
  reasoningSummary: null,
  verbosity: 'medium',
  topLogprobs: 0,
  promptCacheKey: null,
  safetyIdentifier: null,
});

/** The `usage` block; every field and both `*_details` objects are required by the schema. */
export function usageObject(usage: Usage): Record<string, unknown> {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

function formatObject(format: ResponseFormat | undefined): Record<string, unknown> {
  if (format === undefined || format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json_object' };
  // The Responses json_schema format is flat: no `json_schema` wrapper (§2.1).
  return {
    type: 'json_schema',
    name: format.name,
    schema: format.schema,
    strict: format.strict ?? null,
    ...(format.description === undefined ? {} : { description: format.description }),
  };
}

function toolChoiceObject(choice: ToolChoice, tools: CanonicalRequest['tools']): unknown {
  if (typeof choice === 'string') return choice;
  const custom = tools.some((tool) => tool.name === choice.name && tool.custom !== undefined);
  return { type: custom ? 'custom' : 'function', name: choice.name };
}

/** Each tool as the client declared it: custom tools with their format, not as the function they became. */
function toolObject(tool: CanonicalRequest['tools'][number]): Record<string, unknown> {
  if (tool.custom !== undefined) {
    return { type: 'custom', name: tool.name, description: tool.description ?? null, format: tool.custom.format ?? { type: 'text' } };
  }
  return { type: 'function', name: tool.name, description: tool.description ?? null, parameters: tool.parameters ?? null, strict: tool.strict ?? null };
}

/**
 * The echoed settings, in the order OpenAI prints them, split around `output`/`status` by the
 * encoder. Defaults follow OpenAI's echo (temperature and top_p 1, parallel calls on).
 */
export function settingsBeforeOutput(request: CanonicalRequest): Record<string, unknown> {
  return {
    instructions: request.instructions ?? null,
    max_output_tokens: request.maxOutputTokens ?? null,
  };
}

export function settingsAfterOutput(
  request: CanonicalRequest,
  echo: ResponsesEcho,
  persisted: { previousResponseId: string | null; store: boolean },
): Record<string, unknown> {
  return {
    parallel_tool_calls: request.parallelToolCalls ?? true,
    previous_response_id: persisted.previousResponseId,
    prompt_cache_key: echo.promptCacheKey,
    reasoning: { effort: request.reasoningEffort ?? null, summary: echo.reasoningSummary },
    safety_identifier: echo.safetyIdentifier,
    service_tier: 'default',
    store: persisted.store,
    temperature: request.temperature ?? 1,
    text: { format: formatObject(request.responseFormat), verbosity: echo.verbosity },
    tool_choice: toolChoiceObject(request.toolChoice, request.tools),
    tools: echo.toolsAsSent ?? request.tools.map(toolObject),
    top_logprobs: echo.topLogprobs,
    top_p: request.topP ?? 1,
    truncation: echo.truncation,
  };
}
