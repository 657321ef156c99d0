/**
 * Turns canonical events into the Responses API output: the SSE event stream when the client
 * streams, and the final response object either way. Event order and shapes follow
 * https://platform.openai.com/docs/api-reference/responses-streaming (docs/wire-protocols.md §2.5), and
 * meet the invariants openai-node's `responses.stream()` accumulator checks: items are appended at
 * `output_index == output.length`, every item-scoped event names the item at its index, parts are
 * appended at `content_index == parts.length`, and `sequence_number` counts up from 0.
 */
import type { CanonicalEvent, CanonicalRequest, FinishReason, Usage } from '../canonical.js';
import { customInputFromArguments } from './custom-tools.js';
import { responsesFailureFrame } from './failure-frame.js';
import { sseFrame } from '../sse-frame.js';
import { itemObject, outputTextPart, summaryTextPart, type ItemStatus, type OutputItem } from './output-items.js';
import { DEFAULT_ECHO, settingsAfterOutput, settingsBeforeOutput, usageObject, type ResponsesEcho } from './response-settings.js';

export interface ResponsesEncoderOptions {
  /** The response id (`resp_…`), chosen by the caller so it can be stored under it. */
  responseId: string;
  /** Unix seconds. */
  createdAt: number;
  /** The client-facing model id. */
  model: string;
  request: CanonicalRequest;
  /** Whether to produce SSE frames; without it every method returns `[]` and only `response()` matters. */
  stream: boolean;
  /** Echoed as `store` (default true). */
  store?: boolean;
  metadata?: Record<string, string>;
  previousResponseId?: string | null;
  /** Settings without a canonical slot, as `decodeResponsesBody` returns them. */
  echo?: ResponsesEcho;
  /** Item ids; the default draws random hex. */
  idGenerator?: (prefix: ItemIdPrefix) => string;
  /** Unix seconds for `completed_at`; the default reads the system clock. */
  now?: () => number;
  /**
   * The answer is a compaction (docs/wire-protocols.md §23): the model's text is the
   * summary, never streamed; `finish` makes it the one output item, sealed by `seal`.
   */
  compaction?: { seal: (summary: string) => string };
}

type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** Item id prefixes: messages, function calls, reasoning, custom tool calls, web searches, compactions. */
export type ItemIdPrefix = 'msg' | 'fc' | 'rs' | 'ctc' | 'ws' | 'cmp';

/** Random hex ids like OpenAI's (`msg_` + 48 hex digits). */
export function randomItemId(prefix: string): string {
  const bytes = new Uint8Array(24);
  globalThis.crypto.getRandomValues(bytes);
  return `${prefix}_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

export class ResponsesEncoder {
  private readonly options: ResponsesEncoderOptions;
  private readonly newId: (prefix: ItemIdPrefix) => string;
  private readonly output: OutputItem[] = [];
  /** Output indexes of the message and reasoning items still receiving deltas. */
  private openMessage: number | null = null;
  private openReasoning: number | null = null;
  /** Canonical tool-call index → output index, for calls not yet ended. */
  private readonly openCalls = new Map<number, number>();
  private status: ResponseStatus = 'in_progress';
  private finishReason: FinishReason = 'stop';
  private usage: Usage | null = null;
  private error: { code: string; message: string } | null = null;
  private completedAt: number | null = null;
  private sequenceNumber = 0;
  /** With `compaction`: the summary so far. */
  private summary = '';
  private started = false;
  private frames: string[] = [];

  constructor(options: ResponsesEncoderOptions) {
    this.options = options;
    this.newId = options.idGenerator ?? randomItemId;
  }

  /** `response.created` then `response.in_progress`; called implicitly by the first other call. */
  start(): string[] {
    this.ensureStarted();
    return this.drain();
  }

  /**
   * Frames for one event. `response-start` and `usage` carry nothing to show; `finish` is only
   * remembered; an `error` event is ignored too, because failing needs the usage: call `fail()`.
   */
  push(event: CanonicalEvent): string[] {
    this.ensureStarted();
    if (this.status !== 'in_progress') return this.drain();
    if (this.options.compaction !== undefined) {
      // Only the text counts: the summary. Reasoning and (unasked) tool calls are not shown.
      if (event.type === 'text-delta') this.summary += event.delta;
      return this.drain();
    }
    switch (event.type) {
      case 'text-delta':
        this.pushText(event.delta);
        break;
      case 'reasoning-delta':
        this.pushReasoning(event.delta);
        break;
      case 'tool-call-start':
        this.startCall(event.index, event.callId, event.name);
        break;
      case 'tool-call-delta':
        this.pushCallArguments(event.index, event.delta);
        break;
      case 'tool-call-end':
        this.endCall(event.index, 'completed');
        break;
      case 'web-search':
        this.pushWebSearch(event.query);
        break;
      case 'finish':
        this.finishReason = event.reason;
        break;
      case 'response-start':
      case 'usage':
      case 'input-usage':
      case 'error':
        break;
    }
    return this.drain();
  }

  /**
   * Closes whatever is open, in output order, then sends `response.completed`, or
   * `response.incomplete` when the model stopped at the token cap or a content filter.
   */
  finish(usage: Usage): string[] {
    this.ensureStarted();
    if (this.status !== 'in_progress') return this.drain();
    if (this.options.compaction !== undefined) return this.finishCompaction(this.options.compaction.seal, usage);
    const incompleteReason = this.finishReason === 'length' || this.finishReason === 'content_filter';
    this.closeAll(incompleteReason ? 'incomplete' : 'completed');
    this.usage = usage;
    this.status = incompleteReason ? 'incomplete' : 'completed';
    this.completedAt = (this.options.now ?? unixSeconds)();
    this.emitResponse(incompleteReason ? 'response.incomplete' : 'response.completed');
    return this.drain();
  }

  /**
   * The one compaction item, announced whole (added, then done), then `response.completed`. A
   * summary the token cap cut short is still the summary there is: the client needs the item.
   */
  private finishCompaction(seal: (summary: string) => string, usage: Usage): string[] {
    const item: OutputItem = { type: 'compaction', id: this.newId('cmp'), status: 'completed', encryptedContent: seal(this.summary) };
    this.summary = '';
    const outputIndex = this.output.length;
    this.output.push(item);
    this.emit('response.output_item.added', { output_index: outputIndex, item: itemObject(item) });
    this.emit('response.output_item.done', { output_index: outputIndex, item: itemObject(item) });
    this.usage = usage;
    this.status = 'completed';
    this.completedAt = (this.options.now ?? unixSeconds)();
    this.emitResponse('response.completed');
    return this.drain();
  }

  /** Closes open items as `incomplete`, then sends `response.failed` with `error: {code, message}`. */
  fail(code: string, message: string, usage: Usage): string[] {
    this.ensureStarted();
    if (this.status !== 'in_progress') return this.drain();
    this.closeAll('incomplete');
    this.usage = usage;
    this.status = 'failed';
    this.error = { code, message };
    // The same frame a failed pass-through ends with (failure-frame.ts).
    if (this.options.stream) {
      this.frames.push(responsesFailureFrame(this.error, this.sequenceNumber, this.response()));
      this.sequenceNumber += 1;
    }
    return this.drain();
  }

  /** The response object: final after `finish`/`fail`, a snapshot before. */
  response(): Record<string, unknown> {
    const { options } = this;
    return {
      id: options.responseId,
      object: 'response',
      created_at: options.createdAt,
      status: this.status,
      background: false,
      completed_at: this.completedAt,
      error: this.error === null ? null : { ...this.error },
      incomplete_details:
        this.status === 'incomplete' ? { reason: this.finishReason === 'content_filter' ? 'content_filter' : 'max_output_tokens' } : null,
      ...settingsBeforeOutput(options.request),
      model: options.model,
      output: this.output.map((item) => itemObject(item)),
      ...settingsAfterOutput(options.request, options.echo ?? DEFAULT_ECHO, {
        previousResponseId: options.previousResponseId ?? null,
        store: options.store ?? true,
      }),
      usage: this.usage === null ? null : usageObject(this.usage),
      user: (options.echo ?? DEFAULT_ECHO).user,
      metadata: { ...options.metadata },
    };
  }

  private ensureStarted(): void {
    if (this.started) return;
    this.started = true;
    this.emitResponse('response.created');
    this.emitResponse('response.in_progress');
  }

  private pushText(delta: string): void {
    if (delta === '') return;
    this.closeReasoning('completed');
    if (this.openMessage === null) {
      const outputIndex = this.addItem({ type: 'message', id: this.newId('msg'), status: 'in_progress', text: '' });
      this.openMessage = outputIndex;
      this.emit('response.content_part.added', { ...this.itemRef(outputIndex), content_index: 0, part: outputTextPart('') });
    }
    const item = this.output[this.openMessage];
    if (item?.type !== 'message') return;
    item.text += delta;
    if (this.options.stream) this.emit('response.output_text.delta', { ...this.itemRef(this.openMessage), content_index: 0, delta, logprobs: [] });
  }

  /** Reasoning normally precedes the answer; if it comes after text, it starts a new item. */
  private pushReasoning(delta: string): void {
    if (delta === '') return;
    this.closeMessage('completed');
    if (this.openReasoning === null) {
      const outputIndex = this.addItem({ type: 'reasoning', id: this.newId('rs'), status: 'in_progress', text: '' });
      this.openReasoning = outputIndex;
      this.emit('response.reasoning_summary_part.added', { ...this.itemRef(outputIndex), summary_index: 0, part: summaryTextPart('') });
    }
    const item = this.output[this.openReasoning];
    if (item?.type !== 'reasoning') return;
    item.text += delta;
    if (this.options.stream) this.emit('response.reasoning_summary_text.delta', { ...this.itemRef(this.openReasoning), summary_index: 0, delta });
  }

  /**
   * A search the upstream ran: a whole `web_search_call` item with the events OpenAI sends for one
   * (in progress, searching, completed), since it is done by the time it is told. It closes the
   * message or reasoning before it, as any new item does.
   */
  private pushWebSearch(query: string): void {
    this.closeMessage('completed');
    this.closeReasoning('completed');
    const outputIndex = this.addItem({ type: 'web_search_call', id: this.newId('ws'), status: 'in_progress', query });
    const item = this.output[outputIndex];
    if (item?.type !== 'web_search_call') return;
    this.emit('response.web_search_call.in_progress', this.itemRef(outputIndex));
    this.emit('response.web_search_call.searching', this.itemRef(outputIndex));
    item.status = 'completed';
    this.emit('response.web_search_call.completed', this.itemRef(outputIndex));
    this.emit('response.output_item.done', { output_index: outputIndex, item: itemObject(item) });
  }

  private startCall(index: number, callId: string, name: string): void {
    // A repeated start for a call still open is the same call; keep the first.
    if (this.openCalls.has(index)) return;
    this.closeMessage('completed');
    this.closeReasoning('completed');
    const tool = this.options.request.tools.find((candidate) => candidate.name === name);
    const custom = tool?.custom !== undefined;
    const id = this.newId(custom ? 'ctc' : 'fc');
    // The SDK rejects a function_call without a call_id, so an upstream that sent none gets one.
    const effectiveCallId = callId === '' ? `call_${id.replace(/^(fc|ctc)_/, '')}` : callId;
    // A namespaced tool went upstream under its flat name; the client gets the name it declared.
    const declared = tool?.declared === undefined ? { name } : { name: tool.declared.name, namespace: tool.declared.namespace };
    const outputIndex = this.addItem(
      custom
        ? { type: 'custom_tool_call', id, status: 'in_progress', callId: effectiveCallId, ...declared, arguments: '', input: '' }
        : { type: 'function_call', id, status: 'in_progress', callId: effectiveCallId, ...declared, arguments: '' },
    );
    this.openCalls.set(index, outputIndex);
  }

  private pushCallArguments(index: number, delta: string): void {
    const outputIndex = this.openCalls.get(index);
    if (outputIndex === undefined || delta === '') return;
    const item = this.output[outputIndex];
    if (item?.type === 'custom_tool_call') {
      // The input sits inside a JSON string until the arguments are complete; it is sent at the end.
      item.arguments += delta;
      return;
    }
    if (item?.type !== 'function_call') return;
    item.arguments += delta;
    if (this.options.stream) this.emit('response.function_call_arguments.delta', { ...this.itemRef(outputIndex), delta });
  }

  private endCall(index: number, status: ItemStatus): void {
    const outputIndex = this.openCalls.get(index);
    if (outputIndex === undefined) return;
    this.openCalls.delete(index);
    const item = this.output[outputIndex];
    if (item?.type === 'custom_tool_call') {
      item.status = status;
      item.input = customInputFromArguments(item.arguments);
      if (item.input !== '') this.emit('response.custom_tool_call_input.delta', { ...this.itemRef(outputIndex), delta: item.input });
      this.emit('response.custom_tool_call_input.done', { ...this.itemRef(outputIndex), input: item.input });
      this.emit('response.output_item.done', { output_index: outputIndex, item: itemObject(item) });
      return;
    }
    if (item?.type !== 'function_call') return;
    item.status = status;
    this.emit('response.function_call_arguments.done', { ...this.itemRef(outputIndex), name: item.name, arguments: item.arguments });
    this.emit('response.output_item.done', { output_index: outputIndex, item: itemObject(item) });
  }

  private closeMessage(status: ItemStatus): void {
    if (this.openMessage === null) return;
    const outputIndex = this.openMessage;
    this.openMessage = null;
    const item = this.output[outputIndex];
    if (item?.type !== 'message') return;
    item.status = status;
    const reference = { ...this.itemRef(outputIndex), content_index: 0 };
    this.emit('response.output_text.done', { ...reference, text: item.text, logprobs: [] });
    this.emit('response.content_part.done', { ...reference, part: outputTextPart(item.text) });
    this.emit('response.output_item.done', { output_index: outputIndex, item: itemObject(item) });
  }

  private closeReasoning(status: ItemStatus): void {
    if (this.openReasoning === null) return;
    const outputIndex = this.openReasoning;
    this.openReasoning = null;
    const item = this.output[outputIndex];
    if (item?.type !== 'reasoning') return;
    item.status = status;
    const reference = { ...this.itemRef(outputIndex), summary_index: 0 };
    this.emit('response.reasoning_summary_text.done', { ...reference, text: item.text });
    this.emit('response.reasoning_summary_part.done', { ...reference, part: summaryTextPart(item.text) });
    this.emit('response.output_item.done', { output_index: outputIndex, item: itemObject(item) });
  }

  /** Closes every open item in output order, so `.done` events come in the order items were added. */
  private closeAll(status: ItemStatus): void {
    const open: Array<{ outputIndex: number; close: () => void }> = [];
    if (this.openMessage !== null) open.push({ outputIndex: this.openMessage, close: () => this.closeMessage(status) });
    if (this.openReasoning !== null) open.push({ outputIndex: this.openReasoning, close: () => this.closeReasoning(status) });
    for (const [index, outputIndex] of this.openCalls) open.push({ outputIndex, close: () => this.endCall(index, status) });
    open.sort((left, right) => left.outputIndex - right.outputIndex);
    for (const entry of open) entry.close();
  }

  /** Appends an item (at `output_index == output.length`, as the SDK requires) and announces it. */
  private addItem(item: OutputItem): number {
    const outputIndex = this.output.length;
    this.output.push(item);
    this.emit('response.output_item.added', { output_index: outputIndex, item: itemObject(item, false) });
    return outputIndex;
  }

  private itemRef(outputIndex: number): { item_id: string; output_index: number } {
    return { item_id: this.output[outputIndex]?.id ?? '', output_index: outputIndex };
  }

  /** Adds a frame when streaming; the per-delta callers check `stream` first, so a whole answer builds no fields per delta. */
  private emit(type: string, fields: Record<string, unknown>): void {
    if (!this.options.stream) return;
    this.frames.push(sseFrame(type, JSON.stringify({ type, sequence_number: this.sequenceNumber, ...fields })));
    this.sequenceNumber += 1;
  }

  /** Lifecycle events carry the whole response; skip building it when nobody streams. */
  private emitResponse(type: string): void {
    if (this.options.stream) this.emit(type, { response: this.response() });
  }

  private drain(): string[] {
    const frames = this.frames;
    this.frames = [];
    return frames;
  }
}

function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
