/**
 * The contract every client surface keeps, so that one handler (../answer.ts) serves them all
 * without knowing any of them: decode the body into the canonical request and the surface's own
 * extras, check it against the model, optionally prepare it (Responses: expand a stored
 * conversation, keep the answer), encode canonical events back into the surface's wire format, and
 * end a failed pass-through stream in its protocol.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { GatewayError } from '../../../errors/gateway-error.js';
import type { CanonicalEvent, CanonicalRequest, InputUsage, Surface, Usage } from '../../../protocol/canonical.js';
import type { PassthroughFailure } from '../../../providers/provider.js';
import type { ModelEntry } from '../../../routing/catalog.js';

/** What a surface decoded from the client's body: the canonical request and the surface's own extras. */
export interface Decoded<Extras> {
  readonly request: CanonicalRequest;
  /** The client gets a usage report (Chat: when it asked for the usage chunk; always elsewhere). */
  readonly clientWantsUsage: boolean;
  readonly extras: Extras;
  /**
   * The body a pass-through forwards and the hold counts, when the surface rewrote the client's
   * (Responses: a sealed compaction item opened into its summary). Absent: the client's body.
   */
  readonly body?: Readonly<Record<string, unknown>>;
}

/** Encodes one answer. In non-stream mode the frame lists are empty and `body()` is the answer. */
export interface ClientEncoder {
  /**
   * The frames before the first event's. With `startsWithInput`, `input` is the input as far as it
   * is known then (see UsageMeter.inputBeforeAnswer); other encoders are started without it.
   */
  start(input?: InputUsage): string[];
  /** The first frame carries the input's count (Messages' `message_start`). */
  readonly startsWithInput?: boolean;
  push(event: CanonicalEvent): string[];
  finish(usage: Usage): string[];
  /** Ends a stream that failed mid-way with `error` (the surface's failure frame), billed at `usage`. */
  fail(error: GatewayError, usage: Usage): string[];
  /**
   * The complete answer object; call after `finish` (or `fail`). For a stream it is what the final
   * event carries, which is what a stored response keeps.
   */
  body(usage: Usage): Record<string, unknown>;
}

/** Saves the final response object. Never rejects: a failed save is logged and the answer still goes out. */
export type KeepResponse = (response: Record<string, unknown>) => Promise<void>;

/** Who the answer is for, as a surface's `prepare` needs it. */
export interface AnswerScope {
  accountId: string;
  log: FastifyBaseLogger;
}

/** What a surface's `prepare` made of a checked request, before its hold is placed. */
export interface Prepared<Extras> {
  /** The request the upstream answers (a Responses conversation: its stored turns, then the new input). */
  decoded: Decoded<Extras>;
  /**
   * The request holds more than the client's body (stored turns): the hold also counts the
   * canonical request, and a pass-through gets the canonical request rather than the client's
   * body, which names what only the gateway knows.
   */
  expanded: boolean;
  /** Saves the answer's final response object (Responses `store`); absent when nothing is kept. */
  keep?: KeepResponse | undefined;
  /** Input tokens the upstream reads beyond the body and the expansion (Responses: a compaction's instruction). */
  addedInputTokens?: number;
}

/** How a pass-through's answer ends in the surface's protocol. */
export interface PassthroughEnding {
  /**
   * The frame that ends a failed pass-through stream, the same as a translated route's failure;
   * for Responses also the failed response it carries, to be kept.
   */
  passthroughFailure(error: GatewayError, failure: PassthroughFailure, usage: Usage): { sse: string; response?: Record<string, unknown> };
  /** The response object a passed-through whole (JSON) answer is, when it is one to keep. */
  passthroughResponse?(body: Record<string, unknown>): Record<string, unknown> | undefined;
}

export interface SurfaceAdapter<Extras> extends PassthroughEnding {
  readonly surface: Surface;
  /** A pass-through goes to this endpoint of the surface rather than its own (`/responses/compact`). */
  readonly passthroughEndpoint?: 'compact';
  decode(body: unknown, headers: IncomingHttpHeaders): Decoded<Extras>;
  /**
   * Model-specific checks that are 400s (not 503s), run once the model is known to exist. Returns
   * what the handler uses from then on (the model may change the request); never changes `decoded`.
   */
  checkAgainstModel(decoded: Decoded<Extras>, model: ModelEntry): Decoded<Extras>;
  /** Runs before the hold, so that it covers what the upstream will read. Absent: the request as checked. */
  prepare?(decoded: Decoded<Extras>, scope: AnswerScope): Promise<Prepared<Extras>>;
  /** Client headers a pass-through forwards to the upstream (Anthropic's `anthropic-beta`). */
  upstreamHeaders?(decoded: Decoded<Extras>): Record<string, string> | undefined;
  createEncoder(decoded: Decoded<Extras>, createdAt: number): ClientEncoder;
}
