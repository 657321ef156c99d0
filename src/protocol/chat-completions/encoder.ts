/**
 * Canonical events → Chat Completions output: `chat.completion.chunk` SSE frames when streaming
 * (docs/wire-protocols.md §1.4, §1.5), or one `chat.completion` object otherwise (§1.3).
 * https://platform.openai.com/docs/api-reference/chat-streaming
 *
 * While streaming the encoder holds a few flags and nothing per delta, so memory per stream stays
 * constant; only the non-stream path accumulates the text and tool calls, because it must answer
 * with the whole message at once.
 *
 * One exception, for the official SDK: OpenAI streams parallel tool calls one after another, and
 * openai-node's `chat.completions.stream()` relies on it (a fragment for a new index marks the
 * previous call done and JSON-parses its arguments). So the client sees one tool call at a time:
 * a call that starts while another is still open is held, and released whole when the open one
 * ends. Upstreams that emit calls in sequence (all known ones) never hit the hold.
 */
import type { CanonicalEvent, FinishReason, Usage } from '../canonical.js';
import { sseFrame } from '../sse-frame.js';
import { toChatUsage } from './usage.js';

export interface ChatEncoderOptions {
  /** The completion id, `chatcmpl-…`, the same on every chunk. */
  id: string;
  /** Unix seconds. */
  created: number;
  /** The client-facing model id (not the upstream's name for it). */
  model: string;
  stream: boolean;
  /** `stream_options.include_usage`: add `"usage": null` to every chunk and send the usage chunk. */
  includeUsage: boolean;
}

/** A tool call gathered for the non-stream answer, or held back while another call streams. */
interface GatheredToolCall {
  id: string;
  name: string;
  argumentParts: string[];
  /** Held calls only: whether its `tool-call-end` was seen. */
  ended?: boolean;
}

const DONE_FRAME = sseFrame(undefined, '[DONE]');

function frame(json: string): string {
  return sseFrame(undefined, json);
}

export class ChatCompletionsEncoder {
  readonly #options: ChatEncoderOptions;
  /** The JSON of a chunk up to its delta, and after it; the same on every chunk, so built once. */
  readonly #chunkHead: string;
  readonly #chunkTail: string;

  #roleSent = false;
  #finishSent = false;
  #closed = false;
  #sawToolCalls = false;
  #finishReason: FinishReason | undefined;
  #upstreamUsage: Usage | undefined;
  #failure: { code: string; message: string } | undefined;
  /** Streaming: the tool call whose fragments go to the client as they come. */
  #openToolIndex: number | undefined;
  /** Streaming: calls that started while another was open, in start order. */
  readonly #heldToolCalls = new Map<number, GatheredToolCall>();

  // Non-stream only.
  readonly #textParts: string[] = [];
  readonly #toolCalls = new Map<number, GatheredToolCall>();

  constructor(options: ChatEncoderOptions) {
    this.#options = options;
    this.#chunkHead =
      `{"id":${JSON.stringify(options.id)},"object":"chat.completion.chunk","created":${options.created},` +
      `"model":${JSON.stringify(options.model)},"choices":[{"index":0,"delta":`;
    this.#chunkTail = options.includeUsage ? ',"usage":null}' : '}';
  }

  /** The last usage the upstream reported through a `usage` event, if any (never sent by `push`). */
  get upstreamUsage(): Usage | undefined {
    return this.#upstreamUsage;
  }

  /** Non-stream: the `error` event seen, if any, so the caller can answer with an error status instead. */
  get failure(): { code: string; message: string } | undefined {
    return this.#failure;
  }

  /** Encodes one event: SSE frames when streaming, `[]` otherwise (the event is gathered instead). */
  push(event: CanonicalEvent): string[] {
    if (this.#closed) return [];
    if (event.type === 'usage') {
      this.#upstreamUsage = event.usage;
      return [];
    }
    if (event.type === 'input-usage') return [];
    if (event.type === 'error') {
      if (!this.#options.stream) {
        this.#failure = { code: event.code, message: event.message };
        this.#closed = true;
        return [];
      }
      return this.fail(event.code, event.message);
    }
    if (event.type === 'tool-call-start') this.#sawToolCalls = true;
    if (event.type === 'finish') this.#finishReason = event.reason;
    return this.#options.stream ? this.#encodeChunk(event) : this.#gather(event);
  }

  /**
   * Ends a stream: the finish chunk if none was sent (`tool_calls` when tool calls were streamed,
   * else `stop`), the usage chunk when the client asked for it, then `[DONE]`. `[]` when not
   * streaming or already closed.
   */
  finish(usage: Usage): string[] {
    if (!this.#options.stream || this.#closed) return [];
    this.#closed = true;
    const frames = this.#roleFrames();
    if (!this.#finishSent) {
      this.#finishSent = true;
      frames.push(...this.#releaseHeldToolCalls(true));
      frames.push(this.#chunk('{}', this.#sawToolCalls ? 'tool_calls' : 'stop'));
    }
    if (this.#options.includeUsage) {
      const { id, created, model } = this.#options;
      frames.push(frame(JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: toChatUsage(usage) })));
    }
    frames.push(DONE_FRAME);
    return frames;
  }

  /**
   * Ends a stream with an in-band error (§1.5): one frame whose JSON has a top-level `error`, and no
   * `[DONE]`, so that clients do not mistake a failure for a clean end. The SDK throws `APIError`.
   */
  fail(code: string, message: string): string[] {
    if (!this.#options.stream || this.#closed) return [];
    this.#closed = true;
    return [frame(JSON.stringify({ error: { message, type: 'server_error', code } }))];
  }

  /** The non-stream `chat.completion` object (§1.3) built from the gathered events. */
  completion(usage: Usage): Record<string, unknown> {
    const toolCalls = [...this.#toolCalls.entries()]
      .sort(([left], [right]) => left - right)
      .map(([, call]) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.argumentParts.join('') } }));
    const text = this.#textParts.join('');
    const message: Record<string, unknown> = {
      role: 'assistant',
      // OpenAI answers content null when the model only called tools.
      content: text === '' && toolCalls.length > 0 ? null : text,
      refusal: null,
      annotations: [],
    };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    const { id, created, model } = this.#options;
    return {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: this.#finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop') }],
      usage: toChatUsage(usage),
    };
  }

  #encodeChunk(event: Exclude<CanonicalEvent, { type: 'usage' | 'input-usage' | 'error' }>): string[] {
    switch (event.type) {
      case 'response-start':
        return this.#roleFrames();
      case 'text-delta': {
        if (event.delta === '') return [];
        const frames = this.#roleFrames();
        frames.push(this.#chunk(`{"content":${JSON.stringify(event.delta)}}`, null));
        return frames;
      }
      case 'tool-call-start': {
        if (this.#openToolIndex !== undefined && this.#openToolIndex !== event.index) {
          this.#heldToolCalls.set(event.index, { id: event.callId, name: event.name, argumentParts: [] });
          return [];
        }
        this.#openToolIndex = event.index;
        const frames = this.#roleFrames();
        frames.push(this.#toolCallStartChunk(event.index, event.callId, event.name));
        return frames;
      }
      case 'tool-call-delta': {
        if (event.delta === '') return [];
        const held = this.#heldToolCalls.get(event.index);
        if (held !== undefined) {
          held.argumentParts.push(event.delta);
          return [];
        }
        const frames = this.#roleFrames();
        frames.push(this.#toolCallArgumentsChunk(event.index, event.delta));
        return frames;
      }
      case 'tool-call-end': {
        const held = this.#heldToolCalls.get(event.index);
        if (held !== undefined) held.ended = true;
        if (event.index !== this.#openToolIndex) return [];
        this.#openToolIndex = undefined;
        return this.#releaseHeldToolCalls(false);
      }
      case 'finish': {
        if (this.#finishSent) return [];
        this.#finishSent = true;
        const frames = this.#roleFrames();
        frames.push(...this.#releaseHeldToolCalls(true));
        frames.push(this.#chunk('{}', event.reason));
        return frames;
      }
      // Chat Completions has no field for reasoning text (OpenAI never streams it here), nor for a
      // search the upstream ran itself: the answer's text says what it found.
      case 'reasoning-delta':
      case 'web-search':
        return [];
    }
  }

  #gather(event: Exclude<CanonicalEvent, { type: 'usage' | 'input-usage' | 'error' }>): string[] {
    if (event.type === 'text-delta') this.#textParts.push(event.delta);
    else if (event.type === 'tool-call-start') this.#toolCalls.set(event.index, { id: event.callId, name: event.name, argumentParts: [] });
    else if (event.type === 'tool-call-delta') {
      // A delta without its start is a provider bug; keep the arguments rather than lose them.
      let call = this.#toolCalls.get(event.index);
      if (call === undefined) {
        call = { id: '', name: '', argumentParts: [] };
        this.#toolCalls.set(event.index, call);
      }
      call.argumentParts.push(event.delta);
    }
    return [];
  }

  /**
   * Sends held tool calls in start order, each as its start fragment plus its arguments so far.
   * Stops at the first one still open, which becomes the streamed call, unless `all` (the stream
   * is finishing).
   */
  #releaseHeldToolCalls(all: boolean): string[] {
    const frames: string[] = [];
    for (const [index, call] of this.#heldToolCalls) {
      this.#heldToolCalls.delete(index);
      frames.push(this.#toolCallStartChunk(index, call.id, call.name));
      if (call.argumentParts.length > 0) frames.push(this.#toolCallArgumentsChunk(index, call.argumentParts.join('')));
      if (!call.ended && !all) {
        this.#openToolIndex = index;
        break;
      }
    }
    return frames;
  }

  #toolCallStartChunk(index: number, callId: string, name: string): string {
    return this.#chunk(JSON.stringify({ tool_calls: [{ index, id: callId, type: 'function', function: { name, arguments: '' } }] }), null);
  }

  #toolCallArgumentsChunk(index: number, argumentsText: string): string {
    return this.#chunk(JSON.stringify({ tool_calls: [{ index, function: { arguments: argumentsText } }] }), null);
  }

  /** The first chunk (`role: assistant`, empty content), once; `[]` after it was sent. */
  #roleFrames(): string[] {
    if (this.#roleSent) return [];
    this.#roleSent = true;
    return [this.#chunk('{"role":"assistant","content":"","refusal":null}', null)];
  }

  #chunk(deltaJson: string, finishReason: FinishReason | null): string {
    const reason = finishReason === null ? 'null' : `"${finishReason}"`;
    return frame(`${this.#chunkHead}${deltaJson},"logprobs":null,"finish_reason":${reason}}]${this.#chunkTail}`);
  }
}
