/**
 * Gemini's streamed `GenerateContentResponse` chunks turned into canonical events.
 * Vendor reference: https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse
 * (docs/wire-protocols.md §5.3, §5.4, back-mapping §5.6).
 *
 * A Gemini stream has no terminator: `finishReason` comes on the last candidate chunk, and
 * `usageMetadata` may still follow on later chunks (the last one wins). So `usage` and `finish` are
 * given out at the end of the body, and only when a `finishReason` (or a prompt block) was seen: a
 * body that ends without one was cut short.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { CanonicalEvent, FinishReason, Usage } from '../../protocol/canonical.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import { UnreadableStreamError, type StreamTranslator } from '../shared/stream-translator.js';
import type { RememberedCall } from './call-memory.js';
import { describeGeminiError, readGeminiError } from './error-body.js';
import { NOT_REPORTED, reportedTokenCount } from '../shared/reported-count.js';

// Leaves fall back to null when they have an unexpected shape, so that one odd field does not
// break a stream; a chunk that is not an object, or a function call without a name, is garbage.
const tokenCount = reportedTokenCount;
const optionalString = z.string().nullish().catch(null);

const partSchema = z.object({
  text: optionalString,
  thought: z.boolean().nullish().catch(null),
  thoughtSignature: optionalString,
  functionCall: z
    .object({
      id: optionalString,
      name: z.string().min(1),
      args: z.record(z.string(), z.unknown()).nullish().catch(null),
    })
    .nullish(),
});

const usageSchema = z.object({
  promptTokenCount: tokenCount,
  cachedContentTokenCount: tokenCount,
  candidatesTokenCount: tokenCount,
  thoughtsTokenCount: tokenCount,
  toolUsePromptTokenCount: tokenCount,
});

const chunkSchema = z.object({
  candidates: z
    .array(
      z.object({
        index: z.number().int().nullish().catch(null),
        content: z.object({ parts: z.array(partSchema).nullish() }).nullish(),
        finishReason: optionalString,
        // Google Search grounding (a mapped web search): the queries Gemini ran.
        groundingMetadata: z
          .object({ webSearchQueries: z.array(z.string()).nullish().catch(null) })
          .nullish()
          .catch(null),
      }),
    )
    .nullish(),
  promptFeedback: z.object({ blockReason: optionalString }).nullish().catch(null),
  usageMetadata: usageSchema.nullish().catch(null),
});

export type GeminiChunk = z.infer<typeof chunkSchema>;

/**
 * `finishReason` → canonical (§5.6). `STOP` also ends a turn of function calls; that becomes
 * `tool_calls` when calls were made. Policy stops are `content_filter`; the tool-call failures
 * (`MALFORMED_FUNCTION_CALL`, …), `OTHER` and anything new are a plain `stop`.
 */
const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
};

/**
 * Gemini usage → canonical (§5.6): tool-use prompt tokens are input; thoughts are output. Without
 * `promptTokenCount` it is no report (the meter counts); `candidatesTokenCount` is absent when
 * nothing was generated, so it reads as 0.
 */
export function fromGeminiUsage(usage: z.infer<typeof usageSchema>): Usage {
  const thoughts = usage.thoughtsTokenCount ?? 0;
  return {
    inputTokens: (usage.promptTokenCount ?? NOT_REPORTED) + (usage.toolUsePromptTokenCount ?? 0),
    cachedInputTokens: usage.cachedContentTokenCount ?? 0,
    outputTokens: (usage.candidatesTokenCount ?? 0) + thoughts,
    reasoningTokens: thoughts,
  };
}

/** A fresh call id for a function call Gemini sent without one: unique, and OpenAI-shaped. */
export function generateCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

export interface GeminiStreamTranslatorOptions {
  /** Told of each function call, so that its signature can go back with it next turn. */
  onFunctionCall?: (callId: string, call: RememberedCall) => void;
  newCallId?: () => string;
}

export class GeminiStreamTranslator implements StreamTranslator {
  readonly #onFunctionCall: NonNullable<GeminiStreamTranslatorOptions['onFunctionCall']>;
  readonly #newCallId: () => string;
  #calls = 0;
  /** The search queries already told: grounding metadata may repeat on later chunks. */
  readonly #searches = new Set<string>();
  #finishReason: string | undefined;
  #usage: Usage | undefined;
  #ended = false;

  constructor(options: GeminiStreamTranslatorOptions = {}) {
    this.#onFunctionCall = options.onFunctionCall ?? (() => {});
    this.#newCallId = options.newCallId ?? generateCallId;
  }

  /** Never true while the body flows: only the end of the body tells that no more usage follows. */
  get complete(): boolean {
    return this.#ended;
  }

  /** The events of one SSE event. An in-band error object becomes an `error` event (raw message). */
  translate(event: { data: string }): CanonicalEvent[] {
    const parsed = parseJson(event.data);
    if (!parsed.ok) throw new UnreadableStreamError('The upstream sent a stream chunk that is not JSON.');
    return this.read(parsed.value);
  }

  /** The events of one parsed chunk. */
  read(value: unknown): CanonicalEvent[] {
    if (isRecord(value) && value.error !== undefined && value.error !== null) {
      const error = readGeminiError(value.error);
      return [{ type: 'error', code: 'upstream_error', message: error === undefined ? 'The upstream reported an error.' : describeGeminiError(error) }];
    }
    const parsed = chunkSchema.safeParse(value);
    if (!parsed.success) throw new UnreadableStreamError('The upstream sent a chunk that is not a GenerateContentResponse.');
    const chunk = parsed.data;
    if (chunk.usageMetadata) this.#usage = fromGeminiUsage(chunk.usageMetadata);
    if (this.#finishReason !== undefined) return [];

    const events: CanonicalEvent[] = [];
    // Only candidate 0 is read: the gateway never asks for more than one.
    const candidate = chunk.candidates?.find((each) => (each.index ?? 0) === 0);
    for (const part of candidate?.content?.parts ?? []) this.#readPart(part, events);
    for (const query of candidate?.groundingMetadata?.webSearchQueries ?? []) {
      if (this.#searches.has(query)) continue;
      this.#searches.add(query);
      events.push({ type: 'web-search', query });
    }
    if (candidate?.finishReason) this.#finishReason = candidate.finishReason;
    // A blocked prompt has no candidates at all; it is a whole (empty) answer.
    else if (chunk.promptFeedback?.blockReason && (chunk.candidates ?? []).length === 0) this.#finishReason = 'SAFETY';
    return events;
  }

  /** At the end of the body: `usage` (when reported) and `finish`, or undefined when cut short. */
  endOfBody(): CanonicalEvent[] | undefined {
    if (this.#finishReason === undefined || this.#ended) return undefined;
    this.#ended = true;
    const events: CanonicalEvent[] = [];
    if (this.#usage !== undefined) events.push({ type: 'usage', usage: this.#usage });
    events.push({ type: 'finish', reason: this.#finish(this.#finishReason) });
    return events;
  }

  #finish(reason: string): FinishReason {
    const mapped = FINISH_REASONS[reason] ?? 'stop';
    return mapped === 'stop' && this.#calls > 0 ? 'tool_calls' : mapped;
  }

  #readPart(part: z.infer<typeof partSchema>, events: CanonicalEvent[]): void {
    if (part.functionCall) {
      const index = this.#calls++;
      const ownId = part.functionCall.id;
      const upstreamId = ownId !== null && ownId !== undefined && ownId !== '';
      const callId = upstreamId ? ownId : this.#newCallId();
      this.#onFunctionCall(callId, { upstreamId, ...(part.thoughtSignature ? { signature: part.thoughtSignature } : {}) });
      // Gemini sends a call whole, so its arguments go out as one delta.
      events.push(
        { type: 'tool-call-start', index, callId, name: part.functionCall.name },
        { type: 'tool-call-delta', index, delta: JSON.stringify(part.functionCall.args ?? {}) },
        { type: 'tool-call-end', index },
      );
      return;
    }
    if (!part.text) return;
    events.push(part.thought === true ? { type: 'reasoning-delta', delta: part.text } : { type: 'text-delta', delta: part.text });
  }
}
