/**
 * Anthropic's Messages stream (and whole Message objects) turned into canonical events.
 * Vendor reference: https://docs.anthropic.com/en/docs/build-with-claude/streaming
 * (docs/wire-protocols.md §4.3, §4.4, §4.6).
 *
 * Events are read by their payload `type`; unknown event, block and delta types are ignored, as
 * Anthropic asks of clients. Tool calls are numbered 0, 1, … in the order their `tool_use` blocks
 * start (not by block `index`, which also counts text and thinking blocks).
 */
import { z } from 'zod';
import type { CanonicalEvent, FinishReason, InputUsage, Usage } from '../../protocol/canonical.js';
import { countTextTokens } from '../../protocol/tokens.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import type { SseEvent } from '../../lib/sse-decoder.js';
import { UnreadableStreamError, type StreamTranslator } from '../shared/stream-translator.js';
import { STRING_BODY, stringOfBody } from '../shared/json-string-text.js';
import { reportedTokenCount } from '../shared/reported-count.js';

/**
 * `stop_reason` → finish reason (docs/wire-protocols.md §4.6). `pause_turn` follows a long turn of
 * server tools (a mapped web search), which a translated client cannot resume: it reads as a stop.
 */
const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

const count = reportedTokenCount;
const usageSchema = z.object({
  input_tokens: count,
  output_tokens: count,
  cache_read_input_tokens: count,
  cache_creation_input_tokens: count,
  // Reported with the thinking-token-count beta (Claude Code sends it); exact where the gateway's
  // own count of the thinking text is not (and there is no text when thinking is `omitted`).
  output_tokens_details: z.object({ thinking_tokens: count }).nullish(),
});
type WireUsage = z.infer<typeof usageSchema>;

const blockIndex = z.number().int().nonnegative();
const contentBlockSchema = z.object({
  type: z.string(),
  id: z.string().optional(),
  name: z.string().optional(),
  text: z.string().optional(),
  thinking: z.string().optional(),
  input: z.unknown().optional(),
});
const messageStartSchema = z.object({ message: z.object({ usage: usageSchema.nullish() }) });
const blockStartSchema = z.object({ index: blockIndex, content_block: contentBlockSchema });
const blockDeltaSchema = z.object({
  index: blockIndex,
  delta: z.object({ type: z.string(), text: z.string().optional(), partial_json: z.string().optional(), thinking: z.string().optional() }),
});
const blockStopSchema = z.object({ index: blockIndex });
const messageDeltaSchema = z.object({ delta: z.object({ stop_reason: z.string().nullish() }).nullish(), usage: usageSchema.nullish() });
const messageSchema = z.object({ content: z.array(contentBlockSchema), stop_reason: z.string().nullish(), usage: usageSchema.nullish() });

/**
 * A text delta as Anthropic writes it, member for member:
 * `{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}`, almost every
 * event of an answer, read by one fixed pattern instead of `JSON.parse` and the schema. Text of
 * this form parses to these members and no others, so it reads as the schema reads it; any other
 * layout (another order, spaces, one more member) is parsed. Groups: the index, the text's body.
 */
const PLAIN_TEXT_DELTA = new RegExp(String.raw`^\{"type":"content_block_delta","index":(0|[1-9][0-9]{0,8}),"delta":\{"type":"text_delta","text":"(${STRING_BODY})"\}\}$`);

/** A plain text delta's block index and text (see PLAIN_TEXT_DELTA); undefined for any other event. */
export function readPlainTextDelta(data: string): z.infer<typeof blockDeltaSchema> | undefined {
  const match = PLAIN_TEXT_DELTA.exec(data);
  if (match === null) return undefined;
  return { index: Number(match[1]), delta: { type: 'text_delta', text: stringOfBody(match[2] ?? '') } };
}

/** Thinking text is counted in batches this large: constant memory, and few tokenizer calls. */
const BATCH_CHARACTERS = 2_048;

/**
 * Anthropic reports thinking inside `output_tokens`, and its own thinking count only with a beta,
 * so without that count reasoning tokens are estimated by counting the thinking text with the
 * gateway's tokenizer.
 */
export class ReasoningCounter {
  #counted = 0;
  #pending = '';

  add(text: string): void {
    this.#pending += text;
    if (this.#pending.length >= BATCH_CHARACTERS) this.#flush();
  }

  total(): number {
    this.#flush();
    return this.#counted;
  }

  #flush(): void {
    this.#counted += countTextTokens(this.#pending);
    this.#pending = '';
  }
}

/** Running token counts; Anthropic's are cumulative, so later reports replace earlier ones. */
class UsageTally {
  #input = 0;
  #cacheRead = 0;
  #cacheCreation = 0;
  #output = 0;
  #thinking: number | undefined;
  #reported = false;

  record(usage: WireUsage | null | undefined): void {
    if (usage === null || usage === undefined) return;
    if (usage.input_tokens !== null && usage.input_tokens !== undefined) this.#input = usage.input_tokens;
    if (usage.cache_read_input_tokens !== null && usage.cache_read_input_tokens !== undefined) this.#cacheRead = usage.cache_read_input_tokens;
    if (usage.cache_creation_input_tokens !== null && usage.cache_creation_input_tokens !== undefined) this.#cacheCreation = usage.cache_creation_input_tokens;
    if (usage.output_tokens !== null && usage.output_tokens !== undefined) this.#output = usage.output_tokens;
    const thinking = usage.output_tokens_details?.thinking_tokens;
    if (thinking !== null && thinking !== undefined) this.#thinking = thinking;
    this.#reported = true;
  }

  /** The input as reported so far; undefined when the upstream reported none. */
  toInputUsage(): InputUsage | undefined {
    if (!this.#reported) return undefined;
    const usage: InputUsage = {
      // Anthropic's input_tokens excludes both cache counts (docs/wire-protocols.md §4.3).
      inputTokens: this.#input + this.#cacheRead + this.#cacheCreation,
      cachedInputTokens: this.#cacheRead,
    };
    if (this.#cacheCreation > 0) usage.cacheWriteInputTokens = this.#cacheCreation;
    return usage;
  }

  /**
   * The canonical usage; undefined when the upstream reported none (the gateway then counts).
   * `countedReasoning` is the gateway's count of the thinking text, used when the upstream gave none.
   */
  toUsage(countedReasoning: number): Usage | undefined {
    const input = this.toInputUsage();
    if (input === undefined) return undefined;
    return { ...input, outputTokens: this.#output, reasoningTokens: Math.min(this.#thinking ?? countedReasoning, this.#output) };
  }
}

type OpenBlock =
  | { kind: 'text' }
  | { kind: 'thinking' }
  | { kind: 'other' }
  | { kind: 'tool'; ordinal: number; sentArguments: boolean; startInput: Record<string, unknown> }
  /** A `server_tool_use` block (Anthropic ran the tool): its input, gathered until it stops. */
  | { kind: 'server'; name: string; input: string; startInput: unknown };

/** Translates one Messages SSE stream. One instance per stream. */
export class MessagesStreamTranslator implements StreamTranslator {
  readonly #blocks = new Map<number, OpenBlock>();
  readonly #usage = new UsageTally();
  readonly #reasoning = new ReasoningCounter();
  #toolCalls = 0;
  #stopReason: string | null | undefined;
  #sawMessageDelta = false;
  #complete = false;

  get complete(): boolean {
    return this.#complete;
  }

  translate(event: SseEvent): CanonicalEvent[] {
    const plain = readPlainTextDelta(event.data);
    if (plain !== undefined) return this.#blockDelta(plain);
    const parsed = parseJson(event.data);
    if (!parsed.ok) throw new UnreadableStreamError('The upstream sent a stream event that is not JSON.');
    const payload = parsed.value;
    if (!isRecord(payload) || typeof payload.type !== 'string') throw new UnreadableStreamError('The upstream sent a stream event without a type.');
    switch (payload.type) {
      case 'message_start': {
        // What Anthropic read is known from here: billed even if the answer ends without a report.
        this.#usage.record(read(messageStartSchema, payload).message.usage);
        const input = this.#usage.toInputUsage();
        return input === undefined ? [] : [{ type: 'input-usage', usage: input }];
      }
      case 'content_block_start':
        return this.#startBlock(read(blockStartSchema, payload));
      case 'content_block_delta':
        return this.#blockDelta(read(blockDeltaSchema, payload));
      case 'content_block_stop':
        return this.#stopBlock(read(blockStopSchema, payload).index);
      case 'message_delta': {
        const delta = read(messageDeltaSchema, payload);
        this.#sawMessageDelta = true;
        if (delta.delta?.stop_reason !== undefined && delta.delta.stop_reason !== null) this.#stopReason = delta.delta.stop_reason;
        this.#usage.record(delta.usage);
        return [];
      }
      case 'message_stop':
        this.#complete = true;
        return this.#closing();
      case 'error':
        return [{ type: 'error', code: 'upstream_error', message: inBandErrorMessage(payload.error) }];
      default:
        // `ping` and event types newer than this code.
        return [];
    }
  }

  endOfBody(): CanonicalEvent[] | undefined {
    // The answer is whole once `message_delta` has said why it stopped; only `message_stop` is missing.
    return this.#sawMessageDelta ? this.#closing() : undefined;
  }

  #startBlock(start: z.infer<typeof blockStartSchema>): CanonicalEvent[] {
    const block = start.content_block;
    switch (block.type) {
      case 'text':
        this.#blocks.set(start.index, { kind: 'text' });
        return block.text ? [{ type: 'text-delta', delta: block.text }] : [];
      case 'thinking':
        this.#blocks.set(start.index, { kind: 'thinking' });
        return block.thinking ? [this.#reasoningDelta(block.thinking)] : [];
      case 'tool_use': {
        if (!block.id || !block.name) throw new UnreadableStreamError('The upstream started a tool_use block without an id or a name.');
        const ordinal = this.#toolCalls++;
        this.#blocks.set(start.index, { kind: 'tool', ordinal, sentArguments: false, startInput: isRecord(block.input) ? block.input : {} });
        return [{ type: 'tool-call-start', index: ordinal, callId: block.id, name: block.name }];
      }
      case 'server_tool_use':
        this.#blocks.set(start.index, { kind: 'server', name: block.name ?? '', input: '', startInput: block.input });
        return [];
      default:
        // redacted_thinking, server-tool results and the like carry nothing the canonical model can show.
        this.#blocks.set(start.index, { kind: 'other' });
        return [];
    }
  }

  #blockDelta(event: z.infer<typeof blockDeltaSchema>): CanonicalEvent[] {
    const block = this.#blocks.get(event.index);
    if (block === undefined) throw new UnreadableStreamError('The upstream sent a delta for a content block it had not started.');
    const delta = event.delta;
    if (delta.type === 'text_delta' && block.kind === 'text' && delta.text) return [{ type: 'text-delta', delta: delta.text }];
    if (delta.type === 'thinking_delta' && block.kind === 'thinking' && delta.thinking) return [this.#reasoningDelta(delta.thinking)];
    if (delta.type === 'input_json_delta' && block.kind === 'tool' && delta.partial_json) {
      block.sentArguments = true;
      return [{ type: 'tool-call-delta', index: block.ordinal, delta: delta.partial_json }];
    }
    if (delta.type === 'input_json_delta' && block.kind === 'server' && delta.partial_json) block.input += delta.partial_json;
    // signature_delta, citations_delta and empty fragments.
    return [];
  }

  #stopBlock(index: number): CanonicalEvent[] {
    const block = this.#blocks.get(index);
    this.#blocks.delete(index);
    if (block?.kind === 'server') return serverToolEvents(block.name, block.input === '' ? block.startInput : parsedOrNothing(block.input));
    return block?.kind === 'tool' ? closeTool(block) : [];
  }

  #reasoningDelta(text: string): CanonicalEvent {
    this.#reasoning.add(text);
    return { type: 'reasoning-delta', delta: text };
  }

  /** Closes tool calls left open, then usage (when reported) and finish. */
  #closing(): CanonicalEvent[] {
    const events: CanonicalEvent[] = [];
    for (const block of this.#blocks.values()) if (block.kind === 'tool') events.push(...closeTool(block));
    this.#blocks.clear();
    const usage = this.#usage.toUsage(this.#reasoning.total());
    if (usage !== undefined) events.push({ type: 'usage', usage });
    events.push({ type: 'finish', reason: finishReason(this.#stopReason, this.#toolCalls > 0) });
    return events;
  }
}

/**
 * The events of a whole Message object, for an upstream that answers JSON although asked to stream.
 * Throws `UnreadableStreamError` when the body is not a Message.
 */
export function messageObjectEvents(body: Record<string, unknown>): CanonicalEvent[] {
  const parsed = messageSchema.safeParse(body);
  if (!parsed.success) throw new UnreadableStreamError('The upstream answered with a body that is not a message.');
  const events: CanonicalEvent[] = [];
  const reasoning = new ReasoningCounter();
  let toolCalls = 0;
  for (const block of parsed.data.content) {
    if (block.type === 'text' && block.text) events.push({ type: 'text-delta', delta: block.text });
    if (block.type === 'thinking' && block.thinking) {
      reasoning.add(block.thinking);
      events.push({ type: 'reasoning-delta', delta: block.thinking });
    }
    if (block.type === 'server_tool_use') events.push(...serverToolEvents(block.name ?? '', block.input));
    if (block.type === 'tool_use' && block.id && block.name) {
      const index = toolCalls++;
      events.push(
        { type: 'tool-call-start', index, callId: block.id, name: block.name },
        { type: 'tool-call-delta', index, delta: JSON.stringify(isRecord(block.input) ? block.input : {}) },
        { type: 'tool-call-end', index },
      );
    }
  }
  const tally = new UsageTally();
  tally.record(parsed.data.usage);
  const usage = tally.toUsage(reasoning.total());
  if (usage !== undefined) events.push({ type: 'usage', usage });
  events.push({ type: 'finish', reason: finishReason(parsed.data.stop_reason, toolCalls > 0) });
  return events;
}

/**
 * What a server tool Anthropic ran tells the client: a web search (one the catalog mapped) and its
 * query; nothing for the others, or for a search without a query.
 */
function serverToolEvents(name: string, input: unknown): CanonicalEvent[] {
  return name === 'web_search' && isRecord(input) && typeof input.query === 'string' ? [{ type: 'web-search', query: input.query }] : [];
}

function parsedOrNothing(text: string): unknown {
  const parsed = parseJson(text);
  return parsed.ok ? parsed.value : undefined;
}

/** The text of an in-band `error` object (raw: the stream driver redacts it). */
export function inBandErrorMessage(error: unknown): string {
  if (isRecord(error)) {
    if (typeof error.message === 'string' && error.message !== '') return error.message;
    if (typeof error.type === 'string' && error.type !== '') return error.type;
  }
  return 'The upstream reported an error.';
}

function finishReason(stopReason: string | null | undefined, sawToolCalls: boolean): FinishReason {
  const mapped = stopReason === null || stopReason === undefined ? undefined : FINISH_REASONS[stopReason];
  return mapped ?? (sawToolCalls ? 'tool_calls' : 'stop');
}

/** A tool call's end; a call whose input never streamed gets its start input (`{}` when empty), so clients can parse it. */
function closeTool(block: Extract<OpenBlock, { kind: 'tool' }>): CanonicalEvent[] {
  const events: CanonicalEvent[] = [];
  if (!block.sentArguments) events.push({ type: 'tool-call-delta', index: block.ordinal, delta: JSON.stringify(block.startInput) });
  events.push({ type: 'tool-call-end', index: block.ordinal });
  return events;
}

function read<T>(schema: z.ZodType<T>, payload: unknown): T {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new UnreadableStreamError('The upstream sent a stream event that does not match its type.');
  return parsed.data;
}
