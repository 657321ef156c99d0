/**
 * The Responses wire format (POST /responses): its stream events and response objects turned into
 * canonical events (for metering pass-through calls, and for the canonical path of providers that
 * speak only Responses), and the canonical request turned into a Responses body.
 * Vendor reference: https://platform.openai.com/docs/api-reference/responses-streaming
 * (docs/wire-protocols.md §2.4, §2.5).
 */
import { z } from 'zod';
import { isSaneUsage, type CanonicalEvent, type CanonicalRequest, type ContentPart, type FinishReason, type InputItem, type Usage } from '../../protocol/canonical.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import type { SseEvent } from '../../lib/sse-decoder.js';
import type { ProviderCall } from '../provider.js';
import { inBandErrorMessage } from './chat-wire.js';
import { upstreamCodeOf } from '../shared/error-body.js';
import { responsesTool } from '../shared/hosted-tools.js';
import { UnreadableStreamError, type StreamTranslator } from '../shared/stream-translator.js';
import { NOT_REPORTED, readReportedCount, reportedTokenCount } from '../shared/reported-count.js';

/** Builds a Responses body for a canonical request (the inverse of docs/wire-protocols.md §3.1). */
export function toResponsesBody(request: CanonicalRequest, call: Pick<ProviderCall, 'upstreamModel' | 'maxOutputTokens'>): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: call.upstreamModel,
    input: withOpaqueItems(request.input.map(toResponsesItem), request),
    max_output_tokens: call.maxOutputTokens,
    stream: true,
    // The gateway keeps its own conversation state; the upstream need not store anything.
    store: false,
  };
  if (request.instructions !== undefined && request.instructions !== '') body.instructions = request.instructions;
  const hostedTools = (request.hostedTools ?? []).flatMap((tool) => responsesTool(tool, request) ?? []);
  if (request.tools.length > 0 || hostedTools.length > 0) {
    // Namespaced tools go up under their flat names, like on every translated route; Responses
    // hosted tools as the client sent them, since this upstream runs them (an Anthropic web search
    // as Responses' own, when the catalog maps it: shared/hosted-tools.ts).
    body.tools = [
      ...request.tools.map((tool) => ({
        type: 'function',
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.parameters ?? { type: 'object', properties: {} },
        strict: tool.strict ?? false,
      })),
      ...hostedTools,
    ];
    body.tool_choice = typeof request.toolChoice === 'string' ? request.toolChoice : { type: 'function', name: request.toolChoice.name };
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  if (request.reasoningEffort !== undefined) body.reasoning = { effort: request.reasoningEffort };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.responseFormat !== undefined) body.text = { format: request.responseFormat };
  // OpenAI routes calls that share the client's key to the same prompt cache.
  if (request.promptCacheKey !== undefined) body.prompt_cache_key = request.promptCacheKey;
  return body;
}

/** The items the gateway kept as they came, back at their places among the canonical ones. */
function withOpaqueItems(items: Array<Record<string, unknown>>, request: CanonicalRequest): Array<Record<string, unknown>> {
  const opaque = request.opaqueInput ?? [];
  if (opaque.length === 0) return items;
  const result: Array<Record<string, unknown>> = [];
  items.forEach((item, index) => {
    for (const kept of opaque) if (kept.index === index) result.push({ ...kept.raw });
    result.push(item);
  });
  for (const kept of opaque) if (kept.index >= items.length) result.push({ ...kept.raw });
  return result;
}

function toResponsesItem(item: InputItem): Record<string, unknown> {
  if (item.type === 'function_call') return { type: 'function_call', call_id: item.callId, name: item.name, arguments: item.arguments };
  if (item.type === 'function_call_output') return { type: 'function_call_output', call_id: item.callId, output: item.output };
  const assistant = item.role === 'assistant';
  return { type: 'message', role: item.role, content: item.content.map((part) => toResponsesPart(part, assistant)) };
}

function toResponsesPart(part: ContentPart, assistant: boolean): Record<string, unknown> {
  if (part.type === 'image') return { type: 'input_image', image_url: part.url, detail: part.detail ?? 'auto' };
  if (part.type === 'refusal') return { type: 'refusal', refusal: part.refusal };
  return { type: assistant ? 'output_text' : 'input_text', text: part.text };
}

// ---------------------------------------------------------------------------------------------
// Upstream → canonical

// Leaves fall back to null when they have an unexpected shape: a hosted-tool event with, say, a
// non-string `delta` must not break a stream whose other events are fine.
const tokenCount = reportedTokenCount;
const optionalString = z.string().nullish().catch(null);

const responsesUsageSchema = z.object({
  input_tokens: tokenCount,
  output_tokens: tokenCount,
  input_tokens_details: z.object({ cached_tokens: tokenCount }).nullish().catch(null),
  output_tokens_details: z.object({ reasoning_tokens: tokenCount }).nullish().catch(null),
});

const outputItemSchema = z.object({
  type: optionalString,
  call_id: optionalString,
  name: optionalString,
  arguments: optionalString,
  // A `web_search_call`'s action: `{type: "search", query}` (also `open_page`, `find`).
  action: z.object({ type: optionalString, query: optionalString }).nullish().catch(null),
});

const responseObjectSchema = z.object({
  status: optionalString,
  incomplete_details: z.object({ reason: optionalString }).nullish().catch(null),
  error: z.unknown().optional(),
  output: z.array(z.unknown()).nullish().catch(null),
  usage: responsesUsageSchema.nullish().catch(null),
});

const eventSchema = z.object({
  type: z.string(),
  sequence_number: z.number().int().nullish().catch(null),
  delta: optionalString,
  output_index: z.number().int().nonnegative().nullish().catch(null),
  item: outputItemSchema.nullish().catch(null),
  response: responseObjectSchema.nullish().catch(null),
  message: optionalString,
});

/** Responses usage → canonical usage (input includes cached, output includes reasoning). */
export function fromResponsesUsage(usage: z.infer<typeof responsesUsageSchema>): Usage {
  return {
    inputTokens: usage.input_tokens ?? NOT_REPORTED,
    cachedInputTokens: usage.input_tokens_details?.cached_tokens ?? 0,
    outputTokens: usage.output_tokens ?? NOT_REPORTED,
    reasoningTokens: usage.output_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** A Responses `usage` object read as `responsesUsageSchema` and `fromResponsesUsage` read it, without the schema; undefined when it is not an object. */
export function readResponsesUsage(usage: unknown): Usage | undefined {
  if (!isRecord(usage)) return undefined;
  const input = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : undefined;
  const output = isRecord(usage.output_tokens_details) ? usage.output_tokens_details : undefined;
  return {
    inputTokens: readReportedCount(usage.input_tokens) ?? NOT_REPORTED,
    cachedInputTokens: readReportedCount(input?.cached_tokens) ?? 0,
    outputTokens: readReportedCount(usage.output_tokens) ?? NOT_REPORTED,
    reasoningTokens: readReportedCount(output?.reasoning_tokens) ?? 0,
  };
}

/** Terminal status → canonical finish reason (docs/wire-protocols.md §3.2, read backwards). */
function toFinishReason(response: z.infer<typeof responseObjectSchema>, madeToolCalls: boolean): FinishReason {
  if (response.status === 'incomplete') return response.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
  return madeToolCalls ? 'tool_calls' : 'stop';
}

function outputHasToolCalls(response: z.infer<typeof responseObjectSchema>): boolean {
  return (response.output ?? []).some((item) => isRecord(item) && item.type === 'function_call');
}

const TEXT_DELTAS = new Set(['response.output_text.delta', 'response.refusal.delta']);
const REASONING_DELTAS = new Set(['response.reasoning_text.delta', 'response.reasoning_summary_text.delta']);
const TERMINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/**
 * Reads a Responses event stream one parsed event at a time and says which canonical events each
 * carries. Tool calls are numbered 0, 1, … in the order their items appear (the canonical index),
 * not by `output_index`, which also counts message and reasoning items.
 */
export class ResponsesEventReader {
  readonly #callIndexByOutput = new Map<number, number>();
  readonly #openCalls = new Set<number>();
  #lastSequenceNumber: number | undefined;
  #terminal = false;

  /** True once a terminal event (completed, incomplete, failed, error) has been read. */
  get terminal(): boolean {
    return this.#terminal;
  }

  /** The `sequence_number` the next event would carry. */
  get nextSequenceNumber(): number {
    return this.#lastSequenceNumber === undefined ? 0 : this.#lastSequenceNumber + 1;
  }

  /** The events of one SSE event's parsed payload. Throws `UnreadableStreamError` on garbage. */
  read(payload: unknown): CanonicalEvent[] {
    const parsed = eventSchema.safeParse(payload);
    if (!parsed.success) throw new UnreadableStreamError('The upstream sent an event that is not a Responses stream event.');
    const event = parsed.data;
    if (typeof event.sequence_number === 'number') this.#lastSequenceNumber = event.sequence_number;
    if (TERMINAL_EVENTS.has(event.type)) this.#terminal = true;

    if (TEXT_DELTAS.has(event.type)) return event.delta ? [{ type: 'text-delta', delta: event.delta }] : [];
    if (REASONING_DELTAS.has(event.type)) return event.delta ? [{ type: 'reasoning-delta', delta: event.delta }] : [];
    switch (event.type) {
      case 'response.output_item.added':
        return event.item?.type === 'function_call' ? this.#startCall(event.output_index ?? 0, event.item) : [];
      case 'response.function_call_arguments.delta': {
        const index = this.#callIndexByOutput.get(event.output_index ?? 0);
        return index !== undefined && this.#openCalls.has(index) && event.delta ? [{ type: 'tool-call-delta', index, delta: event.delta }] : [];
      }
      case 'response.output_item.done':
        if (event.item?.type === 'web_search_call') return webSearchEvents(event.item);
        return event.item?.type === 'function_call' ? this.#endCall(event.output_index ?? 0, event.item) : [];
      case 'response.completed':
      case 'response.incomplete': {
        const response = event.response ?? { error: null };
        const events = this.#closeOpenCalls();
        if (response.usage) events.push({ type: 'usage', usage: fromResponsesUsage(response.usage) });
        events.push({ type: 'finish', reason: toFinishReason(response, this.#callIndexByOutput.size > 0 || outputHasToolCalls(response)) });
        return events;
      }
      case 'response.failed': {
        const events: CanonicalEvent[] = [];
        if (event.response?.usage) events.push({ type: 'usage', usage: fromResponsesUsage(event.response.usage) });
        events.push({ type: 'error', code: 'upstream_error', message: inBandErrorMessage(event.response?.error), ...upstreamCodeOf(event.response?.error) });
        return events;
      }
      case 'error':
        return [{ type: 'error', code: 'upstream_error', message: event.message || 'The upstream reported an error.', ...upstreamCodeOf(event) }];
      default:
        return [];
    }
  }

  #startCall(outputIndex: number, item: z.infer<typeof outputItemSchema>): CanonicalEvent[] {
    if (this.#callIndexByOutput.has(outputIndex)) return [];
    const index = this.#callIndexByOutput.size;
    this.#callIndexByOutput.set(outputIndex, index);
    this.#openCalls.add(index);
    const events: CanonicalEvent[] = [{ type: 'tool-call-start', index, callId: item.call_id ?? '', name: item.name ?? '' }];
    if (item.arguments) events.push({ type: 'tool-call-delta', index, delta: item.arguments });
    return events;
  }

  #endCall(outputIndex: number, item: z.infer<typeof outputItemSchema>): CanonicalEvent[] {
    // An item that was never announced arrives whole: open it with its full arguments first.
    const events = this.#callIndexByOutput.has(outputIndex) ? [] : this.#startCall(outputIndex, item);
    const index = this.#callIndexByOutput.get(outputIndex);
    if (index === undefined || !this.#openCalls.has(index)) return events;
    this.#openCalls.delete(index);
    events.push({ type: 'tool-call-end', index });
    return events;
  }

  #closeOpenCalls(): CanonicalEvent[] {
    const indexes = [...this.#openCalls].sort((left, right) => left - right);
    this.#openCalls.clear();
    return indexes.map((index) => ({ type: 'tool-call-end', index }));
  }
}

/** A finished `web_search_call` item: a `web-search` event when it searched (not for opening a page). */
function webSearchEvents(item: z.infer<typeof outputItemSchema>): CanonicalEvent[] {
  const action = item.action;
  return action?.type === 'search' && typeof action.query === 'string' ? [{ type: 'web-search', query: action.query }] : [];
}

/** The canonical events of a whole (non-streamed) response object, for metering. */
export function responsesObjectEvents(body: unknown): CanonicalEvent[] {
  const parsed = responseObjectSchema.safeParse(body);
  if (!parsed.success) return [];
  const response = parsed.data;
  const events: CanonicalEvent[] = [];
  let callIndex = 0;
  for (const item of response.output ?? []) {
    if (!isRecord(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (isRecord(part) && part.type === 'output_text' && typeof part.text === 'string' && part.text !== '') events.push({ type: 'text-delta', delta: part.text });
        if (isRecord(part) && part.type === 'refusal' && typeof part.refusal === 'string' && part.refusal !== '') events.push({ type: 'text-delta', delta: part.refusal });
      }
    } else if (item.type === 'web_search_call') {
      const parsed = outputItemSchema.safeParse(item);
      if (parsed.success) events.push(...webSearchEvents(parsed.data));
    } else if (item.type === 'function_call') {
      const index = callIndex;
      callIndex += 1;
      events.push({ type: 'tool-call-start', index, callId: typeof item.call_id === 'string' ? item.call_id : '', name: typeof item.name === 'string' ? item.name : '' });
      if (typeof item.arguments === 'string' && item.arguments !== '') events.push({ type: 'tool-call-delta', index, delta: item.arguments });
      events.push({ type: 'tool-call-end', index });
    }
  }
  if (response.usage) events.push({ type: 'usage', usage: fromResponsesUsage(response.usage) });
  if (response.status === 'failed') events.push({ type: 'error', code: 'upstream_error', message: inBandErrorMessage(response.error), ...upstreamCodeOf(response.error) });
  else events.push({ type: 'finish', reason: toFinishReason(response, callIndex > 0) });
  return events;
}

/**
 * What the usage meter needs of a whole response object passed through: its usage when the report
 * is sane (the meter bills it and counts nothing), and the failure of a `failed` response; else
 * every canonical event, for the meter to count the output itself.
 */
export function responsesObjectMeterEvents(body: Record<string, unknown>): CanonicalEvent[] {
  const usage = readResponsesUsage(body.usage);
  if (usage === undefined || !isSaneUsage(usage)) return responsesObjectEvents(body);
  const events: CanonicalEvent[] = [{ type: 'usage', usage }];
  if (body.status === 'failed') events.push({ type: 'error', code: 'upstream_error', message: inBandErrorMessage(body.error), ...upstreamCodeOf(body.error) });
  return events;
}

/** The canonical path's reading of a Responses stream: complete at its terminal event. */
export class ResponsesStreamTranslator implements StreamTranslator {
  readonly #reader = new ResponsesEventReader();

  get complete(): boolean {
    return this.#reader.terminal;
  }

  translate(event: SseEvent): CanonicalEvent[] {
    const parsed = parseJson(event.data);
    if (!parsed.ok) throw new UnreadableStreamError('The upstream sent a stream event that is not JSON.');
    return this.#reader.read(parsed.value);
  }

  endOfBody(): CanonicalEvent[] | undefined {
    return undefined;
  }
}
