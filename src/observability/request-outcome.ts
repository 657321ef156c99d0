/**
 * What became of one `/v1` answer, filled in by the answer handler as it goes and read once the
 * response has ended (by the request log, the metrics and the traces), so that none of them has to
 * reach into the handler. A request refused before routing has no outcome (null).
 */
import type { GatewayErrorCode } from '../errors/gateway-error.js';
import type { Usage } from '../protocol/canonical.js';

export interface RequestOutcome {
  accountId: string;
  keyId: string;
  /** The client's surface: `responses`, `chat-completions` or `anthropic-messages`. */
  surface: string;
  /** Catalog model id. */
  model: string;
  /** The upstream target that answered (its label), once one did. */
  target: string | null;
  /** The last target that failed before answering (its label), when one was tried and failed. */
  failedTarget: string | null;
  stream: boolean;
  /** Epoch milliseconds when the first byte of the answer was written; null until then. */
  firstByteAt: number | null;
  /** What the settlement billed for (null: nothing produced). */
  usage: Usage | null;
  /** Debited by the settlement, nano-USD. */
  costNanos: bigint;
  /** The gateway error code the answer failed with (also mid-stream), or null. */
  errorCode: GatewayErrorCode | null;
  /**
   * The code the client read instead, when the failure reached it as the upstream wrote it (a
   * pass-through's own failure frame or failed response): the upstream's code, or null.
   */
  toldCode: string | null;
  /**
   * Resolves when the handler is done with the answer (its hold settled). Fastify runs no
   * `onResponse` for a client that went away before the end, so readers wait on this then.
   */
  ended: Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the answer handler once the request is routed to a model. */
    outcome: RequestOutcome | null;
  }
}
