/**
 * The Chat Completions wire format (POST /chat/completions): the canonical request turned into a
 * Chat body, and Chat chunks and answers turned into canonical events.
 * Vendor reference: https://platform.openai.com/docs/api-reference/chat (docs/wire-protocols.md §1, §3.1).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { isSaneUsage, type CanonicalEvent, type CanonicalRequest, type ContentPart, type FinishReason, type InputItem, type ResponseFormat, type ToolChoice, type Usage } from '../../protocol/canonical.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import type { SseEvent } from '../../lib/sse-decoder.js';
import type { ProviderCall } from '../provider.js';
import { UnreadableStreamError, type StreamTranslator } from '../shared/stream-translator.js';
import { NOT_REPORTED, readReportedCount, reportedTokenCount } from '../shared/reported-count.js';
import { readPlainChunk } from './chat-chunk-text.js';

type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

type ChatMessage =
  | { role: 'system' | 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; refusal?: string; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** The Chat Completions request body the canonical path sends. */
export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean } }>;
  tool_choice?: 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };
  parallel_tool_calls?: boolean;
  max_completion_tokens: number;
  reasoning_effort?: string;
  temperature?: number;
  top_p?: number;
  response_format?: Record<string, unknown>;
  /** The client's own key: OpenAI routes calls that share it to the same prompt cache. */
  prompt_cache_key?: string;
  stream: true;
  stream_options: { include_usage: true };
}

/** Builds the Chat body for a canonical request (docs/wire-protocols.md §3.1). */
export function toChatBody(request: CanonicalRequest, call: Pick<ProviderCall, 'upstreamModel' | 'maxOutputTokens'>): ChatRequestBody {
  const messages: ChatMessage[] = [];
  if (request.instructions !== undefined && request.instructions !== '') messages.push({ role: 'system', content: request.instructions });
  messages.push(...toChatMessages(request.input));

  const body: ChatRequestBody = {
    model: call.upstreamModel,
    messages,
    max_completion_tokens: call.maxOutputTokens,
    stream: true,
    // Usage is how the call is billed: always ask for it, whatever the client asked.
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        ...(tool.parameters === undefined ? {} : { parameters: tool.parameters }),
        ...(tool.strict === undefined ? {} : { strict: tool.strict }),
      },
    }));
    body.tool_choice = toChatToolChoice(request.toolChoice);
    // OpenAI rejects parallel_tool_calls without tools.
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  if (request.reasoningEffort !== undefined) body.reasoning_effort = request.reasoningEffort;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.responseFormat !== undefined) body.response_format = toChatResponseFormat(request.responseFormat);
  if (request.promptCacheKey !== undefined) body.prompt_cache_key = request.promptCacheKey;
  return body;
}

function toChatMessages(items: InputItem[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  // The assistant message that a following function_call joins: Chat carries a turn's text and
  // its tool calls in one assistant message, where the canonical model has separate items.
  let openAssistant: Extract<ChatMessage, { role: 'assistant' }> | undefined;
  for (const item of items) {
    if (item.type === 'function_call') {
      const toolCall: ChatToolCall = { id: item.callId, type: 'function', function: { name: item.name, arguments: item.arguments } };
      if (openAssistant === undefined) {
        openAssistant = { role: 'assistant', content: null };
        messages.push(openAssistant);
      }
      (openAssistant.tool_calls ??= []).push(toolCall);
      continue;
    }
    if (item.type === 'function_call_output') {
      openAssistant = undefined;
      messages.push({ role: 'tool', tool_call_id: item.callId, content: item.output });
      continue;
    }
    if (item.role === 'assistant') {
      openAssistant = toAssistantMessage(item.content);
      messages.push(openAssistant);
      continue;
    }
    openAssistant = undefined;
    // `developer` is OpenAI's newer name for `system`; OpenAI treats both alike, and many
    // OpenAI-compatible servers know only `system`.
    messages.push({ role: item.role === 'user' ? 'user' : 'system', content: toChatContent(item.content) });
  }
  return messages;
}

function toAssistantMessage(parts: ContentPart[]): Extract<ChatMessage, { role: 'assistant' }> {
  const text = parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  const refusal = parts.flatMap((part) => (part.type === 'refusal' ? [part.refusal] : [])).join('');
  return { role: 'assistant', content: text === '' ? null : text, ...(refusal === '' ? {} : { refusal }) };
}

function toChatContent(parts: ContentPart[]): string | ChatContentPart[] {
  // A lone text part goes as a plain string, the form every compatible server accepts.
  const [only] = parts;
  if (parts.length === 1 && only?.type === 'text') return only.text;
  return parts.map((part): ChatContentPart => {
    if (part.type === 'image') return { type: 'image_url', image_url: { url: part.url, ...(part.detail === undefined ? {} : { detail: part.detail }) } };
    return { type: 'text', text: part.type === 'text' ? part.text : part.refusal };
  });
}

function toChatToolChoice(choice: ToolChoice): NonNullable<ChatRequestBody['tool_choice']> {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

function toChatResponseFormat(format: ResponseFormat): Record<string, unknown> {
  if (format.type !== 'json_schema') return { type: format.type };
  const jsonSchema: Record<string, unknown> = { name: format.name, schema: format.schema };
  if (format.strict !== undefined) jsonSchema.strict = format.strict;
  if (format.description !== undefined) jsonSchema.description = format.description;
  return { type: 'json_schema', json_schema: jsonSchema };
}

// ---------------------------------------------------------------------------------------------
// Upstream → canonical

// Leaves fall back to null when they have an unexpected shape, so that one odd field of a
// compatible server does not break a stream; only a chunk that is not an object at all is garbage.
const tokenCount = reportedTokenCount;
const optionalString = z.string().nullish().catch(null);

const chatUsageSchema = z.object({
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  prompt_tokens_details: z.object({ cached_tokens: tokenCount }).nullish().catch(null),
  completion_tokens_details: z.object({ reasoning_tokens: tokenCount }).nullish().catch(null),
  // DeepSeek's count of the prompt tokens its cache served (docs/wire-protocols.md §20.3).
  prompt_cache_hit_tokens: tokenCount,
  total_tokens: tokenCount,
});

const toolCallDeltaSchema = z.object({
  index: z.number().int().nonnegative().nullish().catch(null),
  id: optionalString,
  function: z.object({ name: optionalString, arguments: optionalString }).nullish().catch(null),
});

const chatChunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().int().nullish().catch(null),
        delta: z
          .object({
            // A string, or (Mistral's reasoning models) a list of text and thinking chunks: chatContentEvents.
            content: z.unknown().optional(),
            // Non-standard reasoning text of some compatible servers; other shapes are ignored.
            reasoning_content: z.unknown().optional(),
            reasoning: z.unknown().optional(),
            refusal: optionalString,
            tool_calls: z.array(toolCallDeltaSchema).nullish().catch(null),
          })
          .nullish()
          .catch(null),
        finish_reason: optionalString,
      }),
    )
    .nullish(),
  usage: chatUsageSchema.nullish().catch(null),
  // Groq's extension object: its finish chunk carries the usage here (docs/wire-protocols.md §20.3).
  x_groq: z.object({ usage: chatUsageSchema.nullish().catch(null) }).nullish().catch(null),
});

export type ChatChunk = z.infer<typeof chatChunkSchema>;

const chatCompletionSchema = z.object({
  choices: z.array(
    z.object({
      index: z.number().int().nullish().catch(null),
      message: z.object({
        content: z.unknown().optional(),
        reasoning_content: z.unknown().optional(),
        reasoning: z.unknown().optional(),
        refusal: optionalString,
        tool_calls: z.array(z.object({ id: z.string(), function: z.object({ name: z.string(), arguments: z.string() }) })).nullish().catch(null),
      }),
      finish_reason: optionalString,
    }),
  ),
  usage: chatUsageSchema.nullish().catch(null),
});

/** Chat usage → canonical usage (docs/wire-protocols.md §1.3: prompt includes cached, completion includes reasoning). */
export function fromChatUsage(usage: z.infer<typeof chatUsageSchema>): Usage {
  const reasoning = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  return {
    inputTokens: usage.prompt_tokens ?? NOT_REPORTED,
    cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0,
    outputTokens: outputTokensOf(usage.prompt_tokens, usage.completion_tokens, reasoning, usage.total_tokens),
    reasoningTokens: reasoning,
  };
}

/**
 * The output tokens of a Chat usage report: `completion_tokens`, which holds the reasoning tokens
 * on OpenAI's wire, or, when the report's own total says its completion left them out (xAI counts
 * reasoning apart: total = prompt + completion + reasoning, docs/wire-protocols.md §20.3), the
 * completion and the reasoning.
 */
function outputTokensOf(prompt: number | null | undefined, completion: number | null | undefined, reasoning: number, total: number | null | undefined): number {
  if (completion === undefined || completion === null) return NOT_REPORTED;
  if (reasoning > 0 && typeof prompt === 'number' && typeof total === 'number' && total === prompt + completion + reasoning) return completion + reasoning;
  return completion;
}

/** A Chat `usage` object read as `chatUsageSchema` and `fromChatUsage` read it, without the schema; undefined when it is not an object. */
export function readChatUsage(usage: unknown): Usage | undefined {
  if (!isRecord(usage)) return undefined;
  const prompt = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : undefined;
  const completion = isRecord(usage.completion_tokens_details) ? usage.completion_tokens_details : undefined;
  const promptTokens = readReportedCount(usage.prompt_tokens);
  const reasoning = readReportedCount(completion?.reasoning_tokens) ?? 0;
  return {
    inputTokens: promptTokens ?? NOT_REPORTED,
    cachedInputTokens: readReportedCount(prompt?.cached_tokens) ?? readReportedCount(usage.prompt_cache_hit_tokens) ?? 0,
    outputTokens: outputTokensOf(promptTokens, readReportedCount(usage.completion_tokens), reasoning, readReportedCount(usage.total_tokens)),
    reasoningTokens: reasoning,
  };
}

/** Chat `finish_reason` → canonical; `function_call` is the deprecated name of `tool_calls`. */
const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

function toFinishReason(reason: string, madeToolCalls: boolean): FinishReason {
  const mapped = FINISH_REASONS[reason] ?? 'stop';
  // Some compatible servers end a tool-calling turn with `stop`; agents look for `tool_calls`.
  return mapped === 'stop' && madeToolCalls ? 'tool_calls' : mapped;
}

/**
 * The events of a message's or delta's `content`: a string is text. Mistral's reasoning models
 * send a list of chunks instead, `{"type":"text","text":…}` and
 * `{"type":"thinking","thinking":[{"type":"text","text":…}]}` (docs/wire-protocols.md §20.3): their
 * text and their thinking, in order. Any other shape carries nothing.
 */
function chatContentEvents(content: unknown, events: CanonicalEvent[]): void {
  if (typeof content === 'string') {
    if (content !== '') events.push({ type: 'text-delta', delta: content });
    return;
  }
  if (!Array.isArray(content)) return;
  for (const chunk of content) {
    if (!isRecord(chunk)) continue;
    if (chunk.type === 'text' && typeof chunk.text === 'string' && chunk.text !== '') events.push({ type: 'text-delta', delta: chunk.text });
    if (chunk.type !== 'thinking' || !Array.isArray(chunk.thinking)) continue;
    const thinking = chunk.thinking.map((part: unknown) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
    if (thinking !== '') events.push({ type: 'reasoning-delta', delta: thinking });
  }
}

function reasoningText(delta: { reasoning_content?: unknown; reasoning?: unknown }): string {
  if (typeof delta.reasoning_content === 'string') return delta.reasoning_content;
  if (typeof delta.reasoning === 'string') return delta.reasoning;
  return '';
}

/** The message of an in-band `error` object, or a generic one. */
export function inBandErrorMessage(error: unknown): string {
  if (isRecord(error) && typeof error.message === 'string' && error.message !== '') return error.message;
  return 'The upstream reported an error.';
}

/** A chunk read by `chatChunkSchema`; throws `UnreadableStreamError` when it is not a chunk. */
export function readChunkBySchema(chunk: unknown): ChatChunk {
  const parsed = chatChunkSchema.safeParse(chunk);
  if (!parsed.success) throw new UnreadableStreamError('The upstream sent a chunk that is not a chat completion chunk.');
  return parsed.data;
}

/** One streamed Chat chunk as the gateway reads it (`readChatChunk`). */
export interface ReadChatChunk {
  /**
   * What `chatChunkSchema` reads of it; read by the pattern, a chunk that carries the same events.
   * Undefined for an in-band error.
   */
  chunk: ChatChunk | undefined;
  /** An in-band error's message, as the upstream wrote it; undefined for a chunk. */
  error: string | undefined;
  /** The parsed text; undefined when the chunk was read by the pattern. */
  parsed: unknown;
  /** Read by the pattern: the top-level `model` as written (it has no escapes). */
  model: string | undefined;
  /** Read by the pattern: where the model's text starts; -1 otherwise. */
  modelAt: number;
}

/**
 * The one reader of a streamed Chat chunk, from its text. `chatChunkSchema` says what a chunk
 * means; a plain content chunk, almost every chunk of a stream, is read by one fixed pattern
 * instead (chat-chunk-text.ts), to the same events, and anything else is parsed and read by the
 * schema. Throws `UnreadableStreamError` on garbage.
 */
export function readChatChunk(text: string): ReadChatChunk {
  const plain = readPlainChunk(text);
  if (plain !== undefined) {
    const chunk: ChatChunk = { choices: [{ index: 0, delta: { content: plain.content }, finish_reason: null }], usage: null };
    return { chunk, error: undefined, parsed: undefined, model: plain.model, modelAt: plain.modelAt };
  }
  const parsed = parseJson(text);
  if (!parsed.ok) throw new UnreadableStreamError('The upstream sent a stream chunk that is not JSON.');
  const value = parsed.value;
  if (isRecord(value) && value.error !== undefined && value.error !== null) {
    return { chunk: undefined, error: inBandErrorMessage(value.error), parsed: value, model: undefined, modelAt: -1 };
  }
  return { chunk: readChunkBySchema(value), error: undefined, parsed: value, model: undefined, modelAt: -1 };
}

/** The tool calls of a reader that has seen none: empty, and never added to. */
const NO_CALLS: Set<number> = new Set();

/**
 * Reads a Chat chunk stream one parsed chunk at a time and says which canonical events each
 * carries, in chunk order (a finish chunk yields the `tool-call-end`s, then `finish`). Only choice
 * 0 is read: the gateway never asks for `n > 1`.
 */
export class ChatChunkReader {
  // Sets of their own from the first tool call on (most streams make none, and a reader lives as
  // long as its stream); until then both are the shared empty one, never added to.
  #openCalls = NO_CALLS;
  #seenCalls = NO_CALLS;
  #lastCallIndex: number | undefined;
  #finishReason: FinishReason | undefined;

  /** The finish reason, once the upstream has sent it. */
  get finishReason(): FinishReason | undefined {
    return this.#finishReason;
  }

  /** The events of one chunk's text (`readChatChunk`); throws `UnreadableStreamError` on garbage. */
  read(text: string): CanonicalEvent[] {
    return this.events(readChatChunk(text));
  }

  /** The events of one chunk. An in-band `error` object becomes an `error` event (raw message). */
  events(read: ReadChatChunk): CanonicalEvent[] {
    const data = read.chunk;
    if (data === undefined) return [{ type: 'error', code: 'upstream_error', message: read.error ?? inBandErrorMessage(undefined) }];
    const events: CanonicalEvent[] = [];
    const choice = data.choices?.find((candidate) => (candidate.index ?? 0) === 0);
    let finishedNow = false;
    if (choice !== undefined && this.#finishReason === undefined) {
      const delta = choice.delta;
      if (delta?.content) chatContentEvents(delta.content, events);
      // The canonical model has no refusal event; a refusal is still text the model produced.
      if (delta?.refusal) events.push({ type: 'text-delta', delta: delta.refusal });
      const reasoning = delta === null || delta === undefined ? '' : reasoningText(delta);
      if (reasoning !== '') events.push({ type: 'reasoning-delta', delta: reasoning });
      for (const toolCall of delta?.tool_calls ?? []) this.#readToolCall(toolCall, events);
      if (choice.finish_reason) {
        events.push(...this.closeOpenCalls());
        this.#finishReason = toFinishReason(choice.finish_reason, this.#seenCalls.size > 0);
        finishedNow = true;
      }
    }
    const usage = data.usage ?? data.x_groq?.usage;
    if (usage) events.push({ type: 'usage', usage: fromChatUsage(usage) });
    if (finishedNow && this.#finishReason !== undefined) events.push({ type: 'finish', reason: this.#finishReason });
    return events;
  }

  /** `tool-call-end` for every call still open, in index order. */
  closeOpenCalls(): CanonicalEvent[] {
    const indexes = [...this.#openCalls].sort((left, right) => left - right);
    this.#openCalls.clear();
    return indexes.map((index) => ({ type: 'tool-call-end', index }));
  }

  /** The reason to report when the stream ended cleanly without a `finish_reason`. */
  impliedFinishReason(): FinishReason {
    return this.#finishReason ?? (this.#seenCalls.size > 0 ? 'tool_calls' : 'stop');
  }

  #readToolCall(toolCall: z.infer<typeof toolCallDeltaSchema>, events: CanonicalEvent[]): void {
    // `index` is the position in the final tool_calls array; a few servers omit it, in which case
    // a fragment with an id opens a new call and one without continues the last.
    const last = this.#lastCallIndex;
    const index = toolCall.index ?? (toolCall.id || last === undefined ? Math.max(-1, ...this.#seenCalls) + 1 : last);
    if (!this.#seenCalls.has(index)) {
      if (this.#seenCalls === NO_CALLS) {
        this.#seenCalls = new Set();
        this.#openCalls = new Set();
      }
      this.#seenCalls.add(index);
      this.#openCalls.add(index);
      events.push({ type: 'tool-call-start', index, callId: toolCall.id || `call_${randomUUID().replace(/-/g, '')}`, name: toolCall.function?.name ?? '' });
    } else if (!this.#openCalls.has(index)) {
      return; // a fragment for a call already closed: nothing left to attach it to
    }
    this.#lastCallIndex = index;
    const fragment = toolCall.function?.arguments;
    if (fragment) events.push({ type: 'tool-call-delta', index, delta: fragment });
  }
}

/** The canonical events of a whole (non-streamed) chat completion, for metering or replay. */
export function chatCompletionEvents(body: unknown): CanonicalEvent[] {
  const events: CanonicalEvent[] = [];
  const parsed = chatCompletionSchema.safeParse(body);
  if (!parsed.success) {
    // The body still goes to the client as is; metering falls back to whatever usage is readable.
    const usage = isRecord(body) ? chatUsageSchema.safeParse(body.usage) : undefined;
    if (usage?.success) events.push({ type: 'usage', usage: fromChatUsage(usage.data) });
    return events;
  }
  const choice = parsed.data.choices.find((candidate) => (candidate.index ?? 0) === 0);
  const message = choice?.message;
  const toolCalls = message?.tool_calls ?? [];
  if (message !== undefined) {
    const reasoning = reasoningText(message);
    if (reasoning !== '') events.push({ type: 'reasoning-delta', delta: reasoning });
    if (message.content) chatContentEvents(message.content, events);
    if (message.refusal) events.push({ type: 'text-delta', delta: message.refusal });
    toolCalls.forEach((toolCall, index) => {
      events.push({ type: 'tool-call-start', index, callId: toolCall.id, name: toolCall.function.name });
      if (toolCall.function.arguments !== '') events.push({ type: 'tool-call-delta', index, delta: toolCall.function.arguments });
      events.push({ type: 'tool-call-end', index });
    });
  }
  if (parsed.data.usage) events.push({ type: 'usage', usage: fromChatUsage(parsed.data.usage) });
  events.push({ type: 'finish', reason: toFinishReason(choice?.finish_reason ?? 'stop', toolCalls.length > 0) });
  return events;
}

/**
 * What the usage meter needs of a whole chat completion passed through: its usage alone when the
 * report is sane (the meter bills it and counts nothing), else every canonical event, for the meter
 * to count the output itself. Nothing else reads a pass-through answer's events.
 */
export function chatCompletionMeterEvents(body: Record<string, unknown>): CanonicalEvent[] {
  const usage = readChatUsage(body.usage);
  return usage !== undefined && isSaneUsage(usage) ? [{ type: 'usage', usage }] : chatCompletionEvents(body);
}

/**
 * The canonical path's reading of a Chat stream. `finish` is held back until `[DONE]` (or the end
 * of the body) because the usage chunk comes after the finish chunk, and canonical order puts
 * usage first. Usage is held back too and given once, the last report, just before `finish`: Groq
 * reports it twice (`x_groq` on its finish chunk, then a usage chunk when asked), and some servers
 * in every chunk.
 */
export class ChatStreamTranslator implements StreamTranslator {
  readonly #reader = new ChatChunkReader();
  #done = false;
  #usage: CanonicalEvent | undefined;

  get complete(): boolean {
    return this.#done;
  }

  translate(event: SseEvent): CanonicalEvent[] {
    if (event.data === '[DONE]') {
      this.#done = true;
      return this.#ending();
    }
    const events = this.#reader.read(event.data);
    if (!events.some((canonical) => canonical.type === 'finish' || canonical.type === 'usage')) return events;
    return events.filter((canonical) => {
      if (canonical.type === 'usage') this.#usage = canonical;
      return canonical.type !== 'finish' && canonical.type !== 'usage';
    });
  }

  endOfBody(): CanonicalEvent[] | undefined {
    // A body that ends after the finish chunk lost at most the usage chunk: the answer is whole.
    if (this.#done || this.#reader.finishReason === undefined) return undefined;
    this.#done = true;
    return this.#ending();
  }

  #ending(): CanonicalEvent[] {
    const usage = this.#usage === undefined ? [] : [this.#usage];
    return [...this.#reader.closeOpenCalls(), ...usage, { type: 'finish', reason: this.#reader.impliedFinishReason() }];
  }
}
