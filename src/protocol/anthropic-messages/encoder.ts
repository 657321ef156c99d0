/**
 * Canonical events → Anthropic Messages output: the named SSE event sequence when streaming
 * (`message_start`, `ping`, `content_block_start` / `_delta` / `_stop` per block, `message_delta`,
 * `message_stop`; docs/wire-protocols.md §4.4), or one `message` object otherwise (§4.3).
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming
 *
 * Reasoning becomes `thinking` blocks (without text when the client asked for `display:
 * "omitted"`); their signature is empty, since only Anthropic can sign, and a client that sends
 * them back has them dropped on translated routes. Content blocks never overlap on this wire, so a
 * tool call that starts while another is still streaming is held and released whole after it, and
 * so is text that arrives while a call's arguments are still streaming.
 */
import type { CanonicalEvent, FinishReason, InputUsage, Usage } from '../canonical.js';
import { sseFrame } from '../sse-frame.js';

export interface MessagesEncoderOptions {
  /** The message id, `msg_…`. */
  id: string;
  /** The client-facing model id. */
  model: string;
  stream: boolean;
  omitThinking: boolean;
}

const STOP_REASONS: Readonly<Record<FinishReason, string>> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; arguments: string };

interface ToolState {
  id: string;
  name: string;
  /** The block index once it streams; undefined while held. */
  blockIndex: number | undefined;
  heldArguments: string;
  ended: boolean;
}

/** Anthropic's usage object: `input_tokens` excludes both cache counts. */
export function toMessagesUsage(usage: Usage): Record<string, unknown> {
  const cacheWrite = usage.cacheWriteInputTokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - usage.cachedInputTokens - cacheWrite),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: usage.cachedInputTokens,
    output_tokens: usage.outputTokens,
    output_tokens_details: { thinking_tokens: usage.reasoningTokens },
  };
}

function frame(event: string, data: Record<string, unknown>): string {
  return sseFrame(event, JSON.stringify({ type: event, ...data }));
}

export class MessagesEncoder {
  readonly #options: MessagesEncoderOptions;
  #nextBlock = 0;
  /** Streaming: the open block, by kind (a tool block by its canonical call index). */
  #open: { kind: 'text' | 'thinking' } | { kind: 'tool'; index: number } | undefined;
  readonly #tools = new Map<number, ToolState>();
  #sawToolCalls = false;
  #finishReason: FinishReason | undefined;
  #closed = false;
  /** Streaming: text and thinking that arrived while a tool call was open. */
  #heldContent: Array<{ kind: 'text' | 'thinking'; delta: string }> = [];
  /** Non-stream: the content as it builds up. */
  readonly #blocks: Block[] = [];

  constructor(options: MessagesEncoderOptions) {
    this.#options = options;
  }

  /**
   * `message_start` and a `ping`. Its usage holds `input`, the input as far as it is known before
   * the answer (clients price each message from it, so never a 0 when there was input), and no
   * output yet; the final `message_delta` carries the usage billed.
   */
  start(input: InputUsage = { inputTokens: 0, cachedInputTokens: 0 }): string[] {
    if (!this.#options.stream) return [];
    const usage = toMessagesUsage({ ...input, outputTokens: 0, reasoningTokens: 0 });
    const message = { id: this.#options.id, type: 'message', role: 'assistant', model: this.#options.model, content: [], stop_reason: null, stop_sequence: null, usage };
    return [frame('message_start', { message }), frame('ping', {})];
  }

  push(event: CanonicalEvent): string[] {
    if (this.#closed) return [];
    switch (event.type) {
      case 'text-delta':
        return this.#content('text', event.delta);
      case 'reasoning-delta':
        return this.#content('thinking', event.delta);
      case 'tool-call-start':
        this.#sawToolCalls = true;
        this.#tools.set(event.index, { id: event.callId, name: event.name, blockIndex: undefined, heldArguments: '', ended: false });
        return this.#openTool(event.index);
      case 'tool-call-delta':
        return this.#toolDelta(event.index, event.delta);
      case 'tool-call-end':
        return this.#toolEnd(event.index);
      case 'finish':
        this.#finishReason = event.reason;
        return [];
      case 'error':
        return this.fail(event.code, event.message);
      // A search the upstream ran: the answer's text says what it found. Blocks of Anthropic's own
      // (`server_tool_use`, `web_search_tool_result`) would need an `encrypted_content` only Anthropic
      // can make, which it checks when a later turn sends them back.
      case 'web-search':
        return [];
      default:
        return [];
    }
  }

  finish(usage: Usage): string[] {
    if (this.#closed) return [];
    this.#closed = true;
    if (!this.#options.stream) return [];
    const frames = [...this.#closeOpen(), ...this.#releaseHeld(true), ...this.#releaseHeldContent(), ...this.#closeOpen()];
    frames.push(frame('message_delta', { delta: { stop_reason: this.#stopReason(), stop_sequence: null }, usage: toMessagesUsage(usage) }));
    frames.push(frame('message_stop', {}));
    return frames;
  }

  /** A failure mid-stream: Anthropic's in-band `error` event, after which nothing follows. */
  fail(_code: string, message: string): string[] {
    if (this.#closed) return [];
    this.#closed = true;
    if (!this.#options.stream) return [];
    return [frame('error', { error: { type: 'api_error', message } })];
  }

  /** The whole `message` object (non-stream answers). */
  message(usage: Usage): Record<string, unknown> {
    const content = this.#blocks.map((block) => {
      if (block.type !== 'tool_use') return block;
      return { type: 'tool_use', id: block.id, name: block.name, input: parseInput(block.arguments) };
    });
    return {
      id: this.#options.id,
      type: 'message',
      role: 'assistant',
      model: this.#options.model,
      content,
      stop_reason: this.#stopReason(),
      stop_sequence: null,
      usage: toMessagesUsage(usage),
    };
  }

  #stopReason(): string {
    if (this.#finishReason !== undefined) return STOP_REASONS[this.#finishReason];
    return this.#sawToolCalls ? 'tool_use' : 'end_turn';
  }

  #content(kind: 'text' | 'thinking', delta: string): string[] {
    if (!this.#options.stream) {
      const last = this.#blocks.at(-1);
      if (kind === 'text') {
        if (last?.type === 'text') last.text += delta;
        else this.#blocks.push({ type: 'text', text: delta });
      } else {
        const text = this.#options.omitThinking ? '' : delta;
        if (last?.type === 'thinking') last.thinking += text;
        else this.#blocks.push({ type: 'thinking', thinking: text, signature: '' });
      }
      return [];
    }
    if (this.#open?.kind === 'tool') {
      this.#heldContent.push({ kind, delta });
      return [];
    }
    const frames: string[] = [];
    if (this.#open?.kind !== kind) {
      frames.push(...this.#closeOpen());
      const block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
      frames.push(frame('content_block_start', { index: this.#nextBlock, content_block: block }));
      this.#open = { kind };
    }
    if (kind === 'thinking' && this.#options.omitThinking) return frames;
    const payload = kind === 'text' ? { type: 'text_delta', text: delta } : { type: 'thinking_delta', thinking: delta };
    frames.push(frame('content_block_delta', { index: this.#nextBlock, delta: payload }));
    return frames;
  }

  #openTool(index: number): string[] {
    const tool = this.#tools.get(index);
    if (tool === undefined) return [];
    if (!this.#options.stream) {
      this.#blocks.push({ type: 'tool_use', id: tool.id, name: tool.name, arguments: '' });
      tool.blockIndex = this.#blocks.length - 1;
      return [];
    }
    // Another call still streams: hold this one until it ends.
    if (this.#open?.kind === 'tool') return [];
    const frames = this.#closeOpen();
    tool.blockIndex = this.#nextBlock;
    this.#open = { kind: 'tool', index };
    frames.push(frame('content_block_start', { index: tool.blockIndex, content_block: { type: 'tool_use', id: tool.id, name: tool.name, input: {} } }));
    if (tool.heldArguments !== '') frames.push(this.#argumentsFrame(tool.blockIndex, tool.heldArguments));
    tool.heldArguments = '';
    if (tool.ended) frames.push(...this.#closeOpen());
    return frames;
  }

  #toolDelta(index: number, delta: string): string[] {
    const tool = this.#tools.get(index);
    if (tool === undefined || delta === '') return [];
    if (!this.#options.stream) {
      const block = tool.blockIndex === undefined ? undefined : this.#blocks[tool.blockIndex];
      if (block?.type === 'tool_use') block.arguments += delta;
      return [];
    }
    if (tool.blockIndex === undefined) {
      tool.heldArguments += delta;
      return [];
    }
    return [this.#argumentsFrame(tool.blockIndex, delta)];
  }

  #toolEnd(index: number): string[] {
    const tool = this.#tools.get(index);
    if (tool === undefined || tool.ended) return [];
    tool.ended = true;
    if (!this.#options.stream || tool.blockIndex === undefined) return [];
    const frames = [...this.#closeOpen(), ...this.#releaseHeld(false)];
    return this.#open === undefined ? [...frames, ...this.#releaseHeldContent()] : frames;
  }

  #releaseHeldContent(): string[] {
    const held = this.#heldContent;
    this.#heldContent = [];
    return held.flatMap(({ kind, delta }) => this.#content(kind, delta));
  }

  /** Held calls, in start order: each streams whole, the first unfinished one stays open. */
  #releaseHeld(all: boolean): string[] {
    const frames: string[] = [];
    for (const [index, tool] of this.#tools) {
      if (tool.blockIndex !== undefined) continue;
      if (this.#open?.kind === 'tool') break;
      if (all) tool.ended = true;
      frames.push(...this.#openTool(index));
    }
    return frames;
  }

  #argumentsFrame(blockIndex: number, partialJson: string): string {
    return frame('content_block_delta', { index: blockIndex, delta: { type: 'input_json_delta', partial_json: partialJson } });
  }

  #closeOpen(): string[] {
    if (this.#open === undefined) return [];
    this.#open = undefined;
    return [frame('content_block_stop', { index: this.#nextBlock++ })];
  }
}

/** A tool call's arguments as the `input` object; `{}` when they are not a JSON object. */
function parseInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
