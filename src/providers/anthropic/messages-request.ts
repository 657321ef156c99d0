/**
 * The canonical request turned into an Anthropic Messages request body (POST /messages).
 * Vendor reference: https://docs.anthropic.com/en/api/messages (docs/wire-protocols.md §4.2, §4.6).
 *
 * Where Anthropic cannot say what the canonical request says, the choices are:
 * - `function_call.arguments` that are not a JSON object become `input: {}`: the call already
 *   happened, so refusing the whole conversation over a malformed echo helps nobody.
 * - `responseFormat` `json_schema` becomes Anthropic's own structured output
 *   (`output_config.format`), so the answer is held to the schema, not merely asked for it;
 *   `json_object` has no native equivalent and becomes a closing system instruction asking for JSON.
 * - Reasoning effort becomes extended thinking with the budget table below, or no thinking at all
 *   when Anthropic would refuse it (see `thinkingBudget`).
 * - `temperature` is clamped to Anthropic's 0–1 range; with thinking on, neither it nor `top_p`
 *   is sent (Anthropic refuses them then).
 * - Prompt-cache breakpoints become `cache_control` on their blocks, or the gateway places its own
 *   (cache-breakpoints.ts).
 */
import type { CacheBreakpoint, CanonicalRequest, ContentPart, InputItem, ReasoningEffort, ResponseFormat, ToolChoice } from '../../protocol/canonical.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import { UpstreamError, type ProviderCall } from '../provider.js';
import { mappedWebSearch } from '../shared/hosted-tools.js';
import { cacheControlOf, placeCacheBreakpoints, type CacheControl, type CacheHolder } from './cache-breakpoints.js';

export type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

/** A content block; `cache_control` marks a prompt-cache breakpoint after it. */
export type ContentBlock = (
  | { type: 'text'; text: string }
  | { type: 'image'; source: ImageSource }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string }
) &
  CacheHolder;

/** A function tool as Anthropic declares it. */
export interface AnthropicFunctionTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: CacheControl;
}

export interface MessageParam {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: true }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: true }
  | { type: 'none' };

/**
 * Anthropic's server-side web search tool, which a Responses `web_search` tool becomes when the
 * catalog maps hosted tools (`hosted_tools: map`). https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool
 */
export interface AnthropicWebSearchTool {
  type: 'web_search_20250305';
  name: 'web_search';
}

/** The Messages request body the provider sends. */
export interface MessagesRequestBody {
  model: string;
  max_tokens: number;
  system?: Array<{ type: 'text'; text: string; cache_control?: CacheControl }>;
  messages: MessageParam[];
  tools?: Array<AnthropicFunctionTool | AnthropicWebSearchTool>;
  tool_choice?: AnthropicToolChoice;
  thinking?: { type: 'enabled'; budget_tokens: number };
  /** Structured output: the answer's text is JSON valid against `schema` (docs/wire-protocols.md §4.2). */
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
  temperature?: number;
  top_p?: number;
  stream: true;
}

/**
 * Thinking budget per reasoning effort, in tokens. Low, medium and high follow docs/wire-protocols.md
 * §4.6; xhigh and max continue the progression. The budget is further kept below `max_tokens`.
 */
export const THINKING_BUDGETS: Readonly<Record<ReasoningEffort, number>> = Object.freeze({
  low: 2_048,
  medium: 8_192,
  high: 24_576,
  xhigh: 32_768,
  max: 65_536,
});

/** Anthropic's smallest accepted `budget_tokens`. */
export const MIN_THINKING_BUDGET = 1_024;
/** Output tokens kept free for the answer itself when the budget is cut to fit `max_tokens`. */
export const ANSWER_RESERVE_TOKENS = 1_024;

/** Image media types Anthropic accepts in a base64 source. */
const BASE64_IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** Builds the Messages body for a canonical request. Throws a non-failoverable 400 `UpstreamError` for content Anthropic cannot take. */
export function toMessagesBody(request: CanonicalRequest, call: Pick<ProviderCall, 'upstreamModel' | 'maxOutputTokens'>): MessagesRequestBody {
  const messages = toMessages(request.input);
  const body: MessagesRequestBody = { model: call.upstreamModel, max_tokens: call.maxOutputTokens, messages, stream: true };

  const system = systemBlocks(request);
  if (system.length > 0) body.system = system;

  const functionTools: AnthropicFunctionTool[] = request.tools.map((tool) => ({
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    input_schema: tool.parameters ?? { type: 'object', properties: {} },
    ...cacheControlOf(tool.cache),
  }));
  placeCacheBreakpoints({ tools: functionTools, system, messages }, request.cacheMarked === true);
  if (functionTools.length > 0) {
    body.tools = functionTools;
    body.tool_choice = toToolChoice(request.toolChoice, request.parallelToolCalls === false);
  }
  if (mappedWebSearch(request).length > 0) body.tools = [...(body.tools ?? []), { type: 'web_search_20250305', name: 'web_search' }];
  if (request.responseFormat?.type === 'json_schema') body.output_config = { format: { type: 'json_schema', schema: request.responseFormat.schema } };

  const budget = thinkingBudget(request, messages, call.maxOutputTokens);
  if (budget !== undefined) {
    body.thinking = { type: 'enabled', budget_tokens: budget };
  } else {
    if (request.temperature !== undefined) body.temperature = Math.min(Math.max(request.temperature, 0), 1);
    if (request.topP !== undefined) body.top_p = request.topP;
  }
  return body;
}

/**
 * The thinking budget to send, or undefined for no thinking: Anthropic's smallest for OpenAI's
 * `minimal`. None is sent when:
 * - no effort was asked for, or `none`;
 * - the tool choice forces a tool (Anthropic refuses forced tool use with thinking; the client's
 *   explicit tool choice wins over the effort hint);
 * - the conversation is inside a tool loop (it ends with tool results): Anthropic then wants the
 *   signed thinking blocks of the assistant turn back, which the canonical model does not carry;
 * - `max_tokens` leaves no room for the smallest budget plus `ANSWER_RESERVE_TOKENS`.
 */
export function thinkingBudget(request: CanonicalRequest, messages: readonly MessageParam[], maxTokens: number): number | undefined {
  const effort = request.reasoningEffort;
  if (effort === undefined || effort === 'none') return undefined;
  const forcesTool = request.tools.length > 0 && (request.toolChoice === 'required' || typeof request.toolChoice === 'object');
  if (forcesTool || endsInToolLoop(messages)) return undefined;
  const wanted = effort === 'minimal' ? MIN_THINKING_BUDGET : THINKING_BUDGETS[effort];
  const budget = Math.min(wanted, maxTokens - ANSWER_RESERVE_TOKENS);
  return budget >= MIN_THINKING_BUDGET ? budget : undefined;
}

function endsInToolLoop(messages: readonly MessageParam[]): boolean {
  const last = messages.at(-1);
  return last !== undefined && last.role === 'user' && last.content.some((block) => block.type === 'tool_result');
}

function systemBlocks(request: CanonicalRequest): Array<{ type: 'text'; text: string; cache_control?: CacheControl }> {
  const texts: Array<{ text: string; cache?: CacheBreakpoint | undefined }> = [];
  if (request.instructions !== undefined) texts.push({ text: request.instructions, cache: request.instructionsCache });
  for (const item of request.input) {
    // Anthropic's system prompt is text only; an image there has nowhere to go.
    if (item.type === 'message' && (item.role === 'system' || item.role === 'developer')) texts.push({ text: partsText(item.content) });
  }
  // A JSON schema is held by output_config (toMessagesBody); a bare JSON object only asked for.
  const format = request.responseFormat;
  if (format !== undefined && format.type !== 'json_schema') texts.push({ text: responseFormatInstruction(format) });
  return texts.filter((entry) => entry.text !== '').map((entry) => ({ type: 'text', text: entry.text, ...cacheControlOf(entry.cache) }));
}

/**
 * The system instruction standing in for a response format where the wire has no field for it
 * ('' for plain text): `json_object` here, and on Bedrock's Converse, `json_schema` too.
 */
export function responseFormatInstruction(format: ResponseFormat): string {
  switch (format.type) {
    case 'text':
      return '';
    case 'json_object':
      return 'Respond with a single JSON object only: no other text, no code fences.';
    case 'json_schema': {
      const about = format.description === undefined ? '' : ` (${format.description})`;
      return `Respond with a single JSON value only, no other text and no code fences. It must match the JSON Schema "${format.name}"${about}:\n${JSON.stringify(format.schema)}`;
    }
  }
}

function toToolChoice(choice: ToolChoice, disableParallel: boolean): AnthropicToolChoice {
  const parallel = disableParallel ? { disable_parallel_tool_use: true as const } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...parallel };
  if (choice === 'required') return { type: 'any', ...parallel };
  return { type: 'tool', name: choice.name, ...parallel };
}

/**
 * The conversation as alternating user/assistant messages. Anthropic requires the alternation, so
 * consecutive items of the same role are merged: an assistant's text and its tool calls become one
 * message, consecutive tool outputs one user message. In a user message, tool results go first, as
 * Anthropic requires after a `tool_use` turn.
 */
export function toMessages(items: readonly InputItem[]): MessageParam[] {
  const messages: MessageParam[] = [];
  const append = (role: MessageParam['role'], blocks: ContentBlock[]): void => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const item of items) {
    switch (item.type) {
      case 'message':
        if (item.role === 'user') append('user', userBlocks(item.content));
        else if (item.role === 'assistant') append('assistant', assistantBlocks(item.content));
        break;
      case 'function_call':
        append('assistant', [{ type: 'tool_use', id: item.callId, name: item.name, input: toolInput(item.arguments), ...cacheControlOf(item.cache) }]);
        break;
      case 'function_call_output':
        append('user', [{ type: 'tool_result', tool_use_id: item.callId, content: item.output, ...cacheControlOf(item.cache) }]);
        break;
    }
  }
  for (const message of messages) {
    if (message.role === 'user') {
      message.content = [...message.content.filter((block) => block.type === 'tool_result'), ...message.content.filter((block) => block.type !== 'tool_result')];
    }
  }
  return messages;
}

/** The parsed arguments when they are a JSON object, `{}` otherwise (see the file comment). */
export function toolInput(text: string): Record<string, unknown> {
  const parsed = parseJson(text);
  return parsed.ok && isRecord(parsed.value) ? parsed.value : {};
}

function userBlocks(parts: readonly ContentPart[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const part of parts) {
    if (part.type === 'image') blocks.push({ type: 'image', source: imageSource(part.url), ...cacheControlOf(part.cache) });
    else pushText(blocks, part.type === 'text' ? part.text : part.refusal, part.cache);
  }
  return blocks;
}

function assistantBlocks(parts: readonly ContentPart[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const part of parts) {
    // Anthropic takes images from the user only; an assistant's image part is dropped.
    if (part.type !== 'image') pushText(blocks, part.type === 'text' ? part.text : part.refusal, part.cache);
    else keepBreakpoint(blocks, part.cache);
  }
  return blocks;
}

/** Anthropic refuses empty text blocks, so empty texts are left out (their breakpoint goes to the block before). */
function pushText(blocks: ContentBlock[], text: string, cache: CacheBreakpoint | undefined): void {
  if (text !== '') blocks.push({ type: 'text', text, ...cacheControlOf(cache) });
  else keepBreakpoint(blocks, cache);
}

/** The breakpoint of a part left out, on the block before it. */
function keepBreakpoint(blocks: ContentBlock[], cache: CacheBreakpoint | undefined): void {
  const previous = blocks.at(-1);
  if (cache !== undefined && previous !== undefined) Object.assign(previous, cacheControlOf(cache));
}

function partsText(parts: readonly ContentPart[]): string {
  return parts.flatMap((part) => (part.type === 'text' ? [part.text] : part.type === 'refusal' ? [part.refusal] : [])).join('\n');
}

/**
 * An image URL as an Anthropic source: a base64 `data:` URL is split into media type and data, any
 * other URL is passed as a `url` source for Anthropic to fetch.
 */
export function imageSource(url: string): ImageSource {
  if (!url.startsWith('data:')) return { type: 'url', url };
  const match = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s.exec(url);
  const mediaType = match?.[1]?.trim().toLowerCase();
  const isBase64 = match?.[2]?.split(';').some((parameter) => parameter.trim().toLowerCase() === 'base64') ?? false;
  if (match === null || mediaType === undefined || !isBase64 || !BASE64_IMAGE_TYPES.has(mediaType)) {
    const message = "An image in the input is not supported by this model's provider: it takes base64 data URLs of image/jpeg, image/png, image/gif or image/webp, and http(s) URLs.";
    throw new UpstreamError('status', `anthropic request mapping: ${message}`, { status: 400, clientMessage: message });
  }
  return { type: 'base64', media_type: mediaType, data: match[3] ?? '' };
}
