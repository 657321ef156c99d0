/**
 * The contract every upstream provider implements. A provider turns the canonical request into its
 * wire format and its wire stream back into canonical events. Providers never import http, store or
 * billing; they report failures as `UpstreamError` and the router/http layers decide what the client
 * sees.
 */
import type { CanonicalEvent, CanonicalRequest, HostedTool, PricedUnits, Surface, Usage } from '../protocol/canonical.js';
import type { EmbeddingsRequest } from '../protocol/embeddings.js';
import type { ImageEditRequest, ImageFile, ImageGenerationRequest } from '../protocol/images.js';
import type { ModerationsRequest } from '../protocol/moderations.js';
import type { SpeechRequest } from '../protocol/speech.js';
import type { TranscriptionRequest } from '../protocol/transcriptions.js';
import type { Readable } from 'node:stream';

/** What a single upstream call needs besides the request. */
export interface ProviderCall {
  /** The upstream's own name for the model (the catalog target's `model`). */
  upstreamModel: string;
  /**
   * The most output tokens the upstream may produce (reasoning included): the client's cap, limited
   * by the model's `max_output_tokens` and by what the account's hold covers. Always sent upstream.
   */
  maxOutputTokens: number;
  /** Aborted when the client goes away or the gateway gives up; the upstream request must stop. */
  signal: AbortSignal;
  /** Tollgate's request id, for upstream logs (never a secret). */
  requestId: string;
}

/**
 * A same-protocol call whose client body is forwarded nearly as is (unknown fields kept).
 * The body has already been validated by the client codec.
 */
export interface PassthroughCall extends ProviderCall {
  surface: Surface;
  /** The client's JSON body. The provider replaces `model`, caps output and forces usage reporting. */
  body: Readonly<Record<string, unknown>>;
  stream: boolean;
  /** Chat only: whether the client asked for the usage chunk (`stream_options.include_usage`). */
  clientWantsUsage: boolean;
  /** Client headers to forward as they are (Anthropic's `anthropic-beta`), chosen by the surface. */
  headers?: Readonly<Record<string, string>>;
  /**
   * Responses only: the body is a `/responses/compact` call, forwarded there as is but for the
   * model, and answered as JSON (docs/wire-protocols.md §23).
   */
  endpoint?: 'compact';
}

/**
 * One frame of a passed-through stream: the SSE text to send to the client as is ('' sends nothing,
 * e.g. a usage chunk the client did not ask for), plus the canonical events it carries, which feed
 * the usage meter (text deltas for counting a stream cut short, and the final usage).
 *
 * A stream's frames end with exactly one frame marked `last` (a complete answer, or a failure the
 * upstream itself reported in its protocol) or one carrying a `failure`, unless the call is aborted.
 */
export interface PassthroughFrame {
  sse: string;
  events: CanonicalEvent[];
  /**
   * Responses only, on the terminal event (`response.completed`, `.incomplete`, `.failed`): the
   * final response object as sent to the client, already parsed, for the gateway to store.
   */
  finalResponse?: Record<string, unknown>;
  /**
   * The frame that ends the answer (`[DONE]`, a terminal Responses event, `message_stop`): the
   * gateway settles the bill before it sends this frame, so a client that saw it was billed.
   * Frames the upstream sends after it are read (the connection is reused) but not forwarded.
   */
  last?: boolean;
  /**
   * The stream failed here (an upstream error event, garbage, a cut connection): `sse` is empty
   * and `events` ends with the `error` event; the gateway ends the stream in the client's
   * protocol from its error catalogue (docs/wire-protocols.md §1.5, §2.5, §4.5).
   */
  failure?: PassthroughFailure;
}

/** What the gateway needs to end a failed pass-through stream in the client's protocol. */
export interface PassthroughFailure {
  /** Safe to show the client (redacted: no upstream addresses or keys). */
  message: string;
  /** The upstream itself sent the error in its stream (not a cut or a timeout): see UsageMeter.refusedInBand. */
  inBand?: true;
  /** Responses: the `sequence_number` the failure event takes (right after the last one sent). */
  sequenceNumber?: number;
  /**
   * Responses: the response object as the upstream last announced it (`response.created`,
   * `.in_progress`), naming the client's model; absent when none was announced.
   */
  response?: Record<string, unknown>;
}

/** A pass-through not streamed: the upstream's JSON body, and the canonical events it carries. */
export interface PassthroughJson {
  kind: 'json';
  body: Record<string, unknown>;
  /**
   * `body` as JSON text to send as is: the upstream's bytes, but for the model name. Absent: the
   * gateway serializes `body`.
   */
  text?: string;
  /**
   * The canonical events the usage meter reads: at least the usage report and a failure the body
   * reports, and every output event when the report is missing or not sane (the meter then counts
   * the output itself).
   */
  events: CanonicalEvent[];
}

/** A streamed pass-through: its frames, as the upstream sends them. */
export interface PassthroughStream {
  kind: 'stream';
  frames: PassthroughFrames;
}

/**
 * A pass-through's frames, read from the upstream's body in one loop per stream: each chunk that
 * arrives is split into events, and each event's frame is handed to the sink at once, with no
 * promise or iterator step per frame or chunk (docs/architecture.md, "Streams").
 */
export interface PassthroughFrames {
  /** Starts reading the upstream's body; frames go to `sink` until it is over. Called once. */
  start(sink: FrameSink): void;
  /** Reads nothing more until `resume` (the client is slow, or the bill is being settled). */
  pause(): void;
  resume(): void;
  /**
   * Stops the upstream call: the rest of the body is dropped unread, and no frame follows (the
   * sink's `closed` does, once started). Safe at any time, and more than once.
   */
  release(): void;
}

/** What a pass-through's frames go to. */
export interface FrameSink {
  /**
   * One frame, in order. The frame that ends the answer (`last`, or one with a `failure`) is the
   * last one handed over; what the upstream sends after `last` is read (its connection is reused)
   * and dropped.
   */
  frame(frame: PassthroughFrame): void;
  /** The upstream's body is over (read to its end, broken, or released): nothing more comes. */
  closed(): void;
}

/**
 * A translated answer's canonical events, read from the upstream's body in one loop per answer:
 * each chunk that arrives is split into events, each event translated, and its canonical events
 * handed to the sink at once, with no promise or iterator step per chunk or event
 * (docs/architecture.md, "Streams"). The answer ends with the list that holds `finish` or an
 * `error` (always its last event); nothing follows it.
 */
export interface CanonicalEvents {
  /** Starts reading; events go to `sink` until the body is over. Called once. */
  start(sink: EventSink): void;
  /** Reads nothing more until `resume` (the client is slow). */
  pause(): void;
  resume(): void;
  /**
   * Stops the upstream call: the rest is dropped unread, and no event follows (the sink's `closed`
   * does, once started). Safe at any time, and more than once.
   */
  release(): void;
}

/** What a translated answer's events go to. */
export interface EventSink {
  /** The canonical events of one upstream event (or of a whole answer), in order; never empty. */
  events(events: readonly CanonicalEvent[]): void;
  /** The upstream's body is over (read to its end, broken, or released): nothing more comes. */
  closed(): void;
}

/**
 * What a pass-through answers, typed by the call's stream flag: `PassthroughResult<true>` is a
 * stream, `PassthroughResult<false>` a JSON body. A stream request answered with JSON (or the
 * reverse) is an upstream failure, never a result; the router checks it.
 */
export type PassthroughResult<Stream extends boolean = boolean> = Stream extends true ? PassthroughStream : PassthroughJson;

/** An embeddings call (docs/wire-protocols.md §7). */
export interface EmbeddingsCall {
  upstreamModel: string;
  request: EmbeddingsRequest;
  /** The client's JSON body (decoded): what a pass-through forwards, with the upstream's model name. */
  body: Readonly<Record<string, unknown>>;
  signal: AbortSignal;
  requestId: string;
}

/** An embeddings answer: OpenAI's shape, vectors in the encoding the client asked for. */
export interface EmbeddingsResult {
  /** `object`, `data` (one entry per input, in order) and whatever else the upstream sent; the gateway sets `model` and `usage`. */
  body: Record<string, unknown>;
  /** The input tokens the upstream reported, when it reports any (Gemini does not document one). */
  reportedInputTokens?: number;
}

/** A moderations call (docs/wire-protocols.md §11). */
export interface ModerationsCall {
  upstreamModel: string;
  request: ModerationsRequest;
  /** The client's JSON body (decoded): what a pass-through forwards, with the upstream's model name. */
  body: Readonly<Record<string, unknown>>;
  signal: AbortSignal;
  requestId: string;
}

/** A moderations answer in OpenAI's shape (`id`, `results`); the gateway sets `model`. No usage is reported. */
export interface ModerationsResult {
  body: Record<string, unknown>;
}

/**
 * One server-sent event of an endpoint that streams its own events (images, transcriptions,
 * speech as `sse`), as the client gets it; the last one (`report` set) ends the stream and carries
 * what the upstream reported of its use, which is billed before it goes out (http/v1/whole-stream.ts).
 */
export interface EventFrame {
  /** The SSE `event:` line, when the wire format names its events (OpenAI's image streams). */
  event?: string;
  data: Record<string, unknown>;
  report?: { reportedUsage?: Usage; reportedInputTokens?: number; units?: PricedUnits };
}

/** A text-to-speech call (docs/wire-protocols.md §10). */
export interface SpeechCall {
  upstreamModel: string;
  request: SpeechRequest;
  /** The client's JSON body (decoded): what a pass-through forwards, with the upstream's model name. */
  body: Readonly<Record<string, unknown>>;
  signal: AbortSignal;
  requestId: string;
}

/**
 * The audio, streamed as the upstream produces it (destroying it stops the upstream call); or,
 * for `stream_format: "sse"`, its events (`speech.audio.delta`, then `speech.audio.done` with usage).
 */
export type SpeechResult = { contentType: string; audio: Readable } | { events: AsyncIterable<EventFrame> };

/** An image generation or edit call (docs/wire-protocols.md §8, §16). */
export interface ImagesCall {
  upstreamModel: string;
  /** Generations: the client's JSON body (decoded). Edits: its form's fields and files, in the order sent. */
  body: { kind: 'generation'; request: ImageGenerationRequest; json: Readonly<Record<string, unknown>> } | { kind: 'edit'; request: ImageEditRequest; form: readonly (readonly [string, string | ImageFile])[] };
  signal: AbortSignal;
  requestId: string;
}

/** One event of a streamed image answer: its SSE `event:` name, when it came with one, and its JSON. */
export type ImageStreamEvent = EventFrame;

/**
 * An audio-to-text call (docs/wire-protocols.md §9, §15): a transcription or a translation, which
 * `request.endpoint` names; the request holds the client's fields and file as they came.
 */
export interface TranscriptionCall {
  upstreamModel: string;
  request: TranscriptionRequest;
  signal: AbortSignal;
  requestId: string;
}

/** One server-sent event of a streamed transcription (`transcript.text.delta`, `.done`), its data parsed. */
export type TranscriptionEvent = EventFrame;

/**
 * An image answer: OpenAI's JSON (`created`, `data`, and `usage`, `size`, `quality`, … as the
 * upstream sent them), or, with `stream`, its events (partial images, then the `completed` one,
 * which carries the usage). Breaking out of the events stops the upstream call.
 */
export type ImagesResult = { kind: 'json'; body: Record<string, unknown> } | { kind: 'stream'; events: AsyncIterable<ImageStreamEvent> };

/**
 * A transcription's answer, as the upstream gave it: a JSON body (`json`, `verbose_json`, or a
 * model that ignores `stream`), a text document (`text`, `srt`, `vtt`), or events (`stream`).
 * The events end with `transcript.text.done`; a stream that breaks off throws.
 */
export type TranscriptionResult =
  | { kind: 'json'; body: Record<string, unknown> }
  | { kind: 'text'; contentType: string; text: string }
  | { kind: 'events'; events: AsyncIterable<TranscriptionEvent> };

export interface Provider {
  /** The provider's name in the catalog. */
  readonly name: string;
  /**
   * Present when the provider makes images (`/v1/images/generations` and `/v1/images/edits`);
   * resolves once the upstream answered 200 with a readable answer (a stream: its first bytes).
   */
  images?(call: ImagesCall): Promise<ImagesResult>;
  /** Present when the provider speaks text; resolves once the upstream answered 200 (its audio to follow). */
  speak?(call: SpeechCall): Promise<SpeechResult>;
  /** Present when the provider turns audio into text (transcriptions and translations); resolves once the upstream answered 200. */
  transcribe?(call: TranscriptionCall): Promise<TranscriptionResult>;
  /** Present when the provider serves moderations; resolves once the upstream answered 200 with a readable answer. */
  moderate?(call: ModerationsCall): Promise<ModerationsResult>;
  /**
   * Present when the provider serves embeddings. Resolves once the upstream answered 200 with a
   * readable answer (throws `UpstreamError` otherwise), so that a failure can fail over.
   */
  embed?(call: EmbeddingsCall): Promise<EmbeddingsResult>;
  /**
   * Streams the answer as canonical events. The first event is `response-start`, yielded only once
   * the upstream has accepted the request (an HTTP 200), so that a failure before it can fail over.
   * Failures before `response-start` are thrown as `UpstreamError`; failures after it are yielded as
   * an `error` event, and the iteration ends. Breaking out of the iteration aborts the upstream call.
   */
  stream(request: CanonicalRequest, call: ProviderCall): AsyncIterable<CanonicalEvent>;
  /**
   * The same answer as `stream`, read in one loop (`CanonicalEvents`): resolves once the upstream
   * has accepted the request (where `stream` yields `response-start`, which is not among the
   * events), and rejects with `UpstreamError` before that, so that a failure can fail over. What
   * the router opens when present (every HTTP provider); `stream` reads the same events.
   */
  openEvents?(request: CanonicalRequest, call: ProviderCall): Promise<CanonicalEvents>;
  /**
   * Present when the provider speaks `surface` natively: the client body is forwarded with unknown
   * fields intact. Resolves once the upstream has answered 200 (throws `UpstreamError` otherwise).
   */
  passthrough?(call: PassthroughCall): Promise<PassthroughResult>;
  /** Whether `passthrough` can serve this surface. */
  speaksNatively?(surface: Surface): boolean;
  /**
   * Whether the canonical path (`stream`) sends this hosted tool upstream (as is, or mapped to the
   * upstream's equivalent); the others are dropped and named to the client. Absent: none is sent.
   */
  keepsHostedTool?(tool: HostedTool, request: CanonicalRequest): boolean;
  /** Present when the provider's config lists several keys (`api_keys`): their states, by name. */
  upstreamKeys?: UpstreamKeys;
  /** Releases connection pools. */
  close?(): Promise<void>;
}

/** One key of a provider's pool as operators see it: by its name, never its secret. */
export interface UpstreamKeyView {
  name: string;
  /** `cooling`: the upstream answered 429, skipped until `coolingUntil`; `refused`: out until restart. */
  state: 'ok' | 'cooling' | 'refused';
  /** With `cooling`: until when (ms since epoch). */
  coolingUntil: number | null;
  /** Calls sent with this key since the process started. */
  calls: number;
}

/** A key that left its pool (refused: 401, 403) or began to cool down (429), as it happened. */
export type UpstreamKeyEvent = { type: 'refused'; key: string; status: number } | { type: 'cooling'; key: string; status: number; until: number };

/** The keys of a provider's pool (docs/architecture.md, "Pools of upstream keys"). */
export interface UpstreamKeys {
  /** Each key's state now, in the catalog's order. */
  list(): UpstreamKeyView[];
  /** Told of every event; must return at once (it runs on a request's path). */
  onEvent(listener: (event: UpstreamKeyEvent) => void): void;
}

/** Why an upstream call failed. */
export type UpstreamFailureKind =
  /** Could not connect, or the connection was reset before an answer. */
  | 'connect'
  /** No first byte, or too long a silence between chunks. */
  | 'timeout'
  /** The upstream answered with a non-2xx status. */
  | 'status'
  /** The upstream answered something we cannot read. */
  | 'protocol'
  /** The gateway's own upstream credentials were refused (401/403 from the upstream). */
  | 'credentials';

export class UpstreamError extends Error {
  readonly kind: UpstreamFailureKind;
  /** The upstream's HTTP status, when it answered with one. */
  readonly status: number | undefined;
  /**
   * For `status` 4xx caused by the request itself: the upstream's reason, safe to show the client
   * (never contains upstream URLs or keys).
   */
  readonly clientMessage: string | undefined;
  /**
   * With `clientMessage`: the `code` the client's error carries instead of the gateway's own, when
   * the upstream's refusal has a name clients act on (Azure's `content_filter`, docs/wire-protocols.md §17.4).
   */
  readonly clientCode: string | undefined;

  constructor(kind: UpstreamFailureKind, message: string, options: { status?: number; clientMessage?: string; clientCode?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UpstreamError';
    this.kind = kind;
    this.status = options.status;
    this.clientMessage = options.clientMessage;
    this.clientCode = options.clientCode;
  }

  /** Whether another target may succeed where this one failed (connection, timeout, 429, 5xx, credentials). */
  get failoverable(): boolean {
    if (this.kind !== 'status') return true;
    const status = this.status ?? 500;
    return status === 429 || status === 408 || status >= 500;
  }
}
