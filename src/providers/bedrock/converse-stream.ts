/**
 * Bedrock's ConverseStream events (and whole Converse answers) turned into canonical events
 * (docs/wire-protocols.md §18.4). The events come from the event-stream splitter
 * (event-stream.ts), named by their `:event-type`; unknown events and delta kinds are ignored.
 * Tool calls are numbered 0, 1, … in the order their `toolUse` blocks start.
 *
 * `messageStop` says why the model stopped; `metadata`, which follows it, carries the usage, and
 * ends the answer. An exception message (`exception:…`) is an in-band failure.
 */
import { z } from 'zod';
import type { CanonicalEvent, FinishReason, Usage } from '../../protocol/canonical.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import type { SseEvent } from '../../lib/sse-decoder.js';
import { ReasoningCounter } from '../anthropic/messages-stream.js';
import { reportedTokenCount } from '../shared/reported-count.js';
import { UnreadableStreamError, type StreamTranslator } from '../shared/stream-translator.js';

/** `stopReason` → finish reason. */
const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

const count = reportedTokenCount;
const usageSchema = z.object({ inputTokens: count, outputTokens: count, cacheReadInputTokens: count, cacheWriteInputTokens: count });
type WireUsage = z.infer<typeof usageSchema>;

const blockIndex = z.number().int().nonnegative();
const blockStartSchema = z.object({ contentBlockIndex: blockIndex, start: z.object({ toolUse: z.object({ toolUseId: z.string().min(1), name: z.string().min(1) }).optional() }).optional() });
const blockDeltaSchema = z.object({
  contentBlockIndex: blockIndex,
  delta: z.object({
    text: z.string().optional(),
    toolUse: z.object({ input: z.string() }).optional(),
    reasoningContent: z.object({ text: z.string().optional() }).optional(),
  }),
});
const blockStopSchema = z.object({ contentBlockIndex: blockIndex });
const messageStopSchema = z.object({ stopReason: z.string().nullish() });
const metadataSchema = z.object({ usage: usageSchema.nullish() });
const wholeSchema = z.object({
  output: z.object({
    message: z.object({
      content: z.array(
        z.object({
          text: z.string().optional(),
          toolUse: z.object({ toolUseId: z.string(), name: z.string(), input: z.unknown() }).optional(),
          reasoningContent: z.object({ reasoningText: z.object({ text: z.string() }).optional() }).optional(),
        }),
      ),
    }),
  }),
  stopReason: z.string().nullish(),
  usage: usageSchema.nullish(),
});

/**
 * Converse's usage as canonical usage: its `inputTokens` leaves out the tokens read from and written
 * to the prompt cache (as Anthropic's does), so the canonical input adds them back.
 */
function canonicalUsage(usage: WireUsage | null | undefined, reasoning: number): Usage | undefined {
  if (usage === null || usage === undefined) return undefined;
  const read = usage.cacheReadInputTokens ?? 0;
  const written = usage.cacheWriteInputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  const canonical: Usage = { inputTokens: (usage.inputTokens ?? 0) + read + written, cachedInputTokens: read, outputTokens: output, reasoningTokens: Math.min(reasoning, output) };
  if (written > 0 || Number.isNaN(written)) canonical.cacheWriteInputTokens = written;
  return canonical;
}

function finishReason(stopReason: string | null | undefined, sawToolCalls: boolean): FinishReason {
  const mapped = stopReason === null || stopReason === undefined ? undefined : FINISH_REASONS[stopReason];
  return mapped ?? (sawToolCalls ? 'tool_calls' : 'stop');
}

/** The text of an exception message's payload (raw: the stream driver redacts it). */
export function exceptionMessage(event: string, data: string): string {
  const parsed = parseJson(data);
  const name = event.slice(event.indexOf(':') + 1);
  const message = parsed.ok && isRecord(parsed.value) && typeof parsed.value.message === 'string' ? parsed.value.message : undefined;
  return message === undefined || message === '' ? `The upstream reported ${name || 'an error'}.` : `${name}: ${message}`;
}

/** Whether an event names a failure (an exception or error message), not an answer's event. */
export function isFailureEvent(event: string | undefined): boolean {
  return event !== undefined && (event.startsWith('exception:') || event.startsWith('error:'));
}

/** Translates one ConverseStream. One instance per stream. */
export class ConverseStreamTranslator implements StreamTranslator {
  /** Open tool blocks: their content block index → their tool call number. */
  readonly #tools = new Map<number, number>();
  readonly #reasoning = new ReasoningCounter();
  #toolCalls = 0;
  #stopReason: string | null | undefined;
  #stopped = false;
  #complete = false;

  get complete(): boolean {
    return this.#complete;
  }

  translate(event: SseEvent): CanonicalEvent[] {
    const name = event.event ?? '';
    if (isFailureEvent(name)) return [{ type: 'error', code: 'upstream_error', message: exceptionMessage(name, event.data) }];
    const parsed = parseJson(event.data);
    if (!parsed.ok || !isRecord(parsed.value)) throw new UnreadableStreamError('The upstream sent a stream event that is not a JSON object.');
    const payload = parsed.value;
    switch (name) {
      case 'contentBlockStart': {
        const start = read(blockStartSchema, payload);
        const toolUse = start.start?.toolUse;
        if (toolUse === undefined) return [];
        const ordinal = this.#toolCalls++;
        this.#tools.set(start.contentBlockIndex, ordinal);
        return [{ type: 'tool-call-start', index: ordinal, callId: toolUse.toolUseId, name: toolUse.name }];
      }
      case 'contentBlockDelta':
        return this.#delta(read(blockDeltaSchema, payload));
      case 'contentBlockStop': {
        const index = read(blockStopSchema, payload).contentBlockIndex;
        const ordinal = this.#tools.get(index);
        this.#tools.delete(index);
        return ordinal === undefined ? [] : [{ type: 'tool-call-end', index: ordinal }];
      }
      case 'messageStop':
        this.#stopReason = read(messageStopSchema, payload).stopReason;
        this.#stopped = true;
        return [];
      case 'metadata': {
        this.#complete = true;
        return this.#closing(read(metadataSchema, payload).usage);
      }
      default:
        // `messageStart`, and events newer than this code.
        return [];
    }
  }

  endOfBody(): CanonicalEvent[] | undefined {
    // Whole once `messageStop` said why it stopped; only the usage report is missing (the meter counts).
    return this.#stopped ? this.#closing(undefined) : undefined;
  }

  #delta(event: z.infer<typeof blockDeltaSchema>): CanonicalEvent[] {
    const delta = event.delta;
    if (delta.text !== undefined && delta.text !== '') return [{ type: 'text-delta', delta: delta.text }];
    if (delta.toolUse !== undefined && delta.toolUse.input !== '') {
      const ordinal = this.#tools.get(event.contentBlockIndex);
      if (ordinal === undefined) throw new UnreadableStreamError('The upstream sent tool input for a content block that is not a tool call.');
      return [{ type: 'tool-call-delta', index: ordinal, delta: delta.toolUse.input }];
    }
    const thinking = delta.reasoningContent?.text;
    if (thinking !== undefined && thinking !== '') {
      this.#reasoning.add(thinking);
      return [{ type: 'reasoning-delta', delta: thinking }];
    }
    // Reasoning signatures, redacted reasoning, empty fragments.
    return [];
  }

  #closing(wire: WireUsage | null | undefined): CanonicalEvent[] {
    const events: CanonicalEvent[] = [];
    for (const ordinal of this.#tools.values()) events.push({ type: 'tool-call-end', index: ordinal });
    this.#tools.clear();
    const usage = canonicalUsage(wire, this.#reasoning.total());
    if (usage !== undefined) events.push({ type: 'usage', usage });
    events.push({ type: 'finish', reason: finishReason(this.#stopReason, this.#toolCalls > 0) });
    return events;
  }
}

/** The events of a whole Converse answer. Throws `UnreadableStreamError` when the body is not one. */
export function converseAnswerEvents(body: Record<string, unknown>): CanonicalEvent[] {
  const parsed = wholeSchema.safeParse(body);
  if (!parsed.success) throw new UnreadableStreamError('The upstream answered with a body that is not a Converse answer.');
  const events: CanonicalEvent[] = [];
  const reasoning = new ReasoningCounter();
  let toolCalls = 0;
  for (const block of parsed.data.output.message.content) {
    if (block.text !== undefined && block.text !== '') events.push({ type: 'text-delta', delta: block.text });
    const thinking = block.reasoningContent?.reasoningText?.text;
    if (thinking !== undefined && thinking !== '') {
      reasoning.add(thinking);
      events.push({ type: 'reasoning-delta', delta: thinking });
    }
    if (block.toolUse !== undefined) {
      const index = toolCalls++;
      events.push(
        { type: 'tool-call-start', index, callId: block.toolUse.toolUseId, name: block.toolUse.name },
        { type: 'tool-call-delta', index, delta: JSON.stringify(isRecord(block.toolUse.input) ? block.toolUse.input : {}) },
        { type: 'tool-call-end', index },
      );
    }
  }
  const usage = canonicalUsage(parsed.data.usage, reasoning.total());
  if (usage !== undefined) events.push({ type: 'usage', usage });
  events.push({ type: 'finish', reason: finishReason(parsed.data.stopReason, toolCalls > 0) });
  return events;
}

function read<T>(schema: z.ZodType<T>, payload: unknown): T {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new UnreadableStreamError('The upstream sent a stream event that does not match its type.');
  return parsed.data;
}
