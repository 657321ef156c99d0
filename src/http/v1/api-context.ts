/**
 * What the API hooks learn about a request (its key and account) and pass on to the handlers.
 */
import type { AuthenticatedKey } from '../../auth/authenticator.js';
import type { Surface } from '../../protocol/canonical.js';

export interface ApiContext extends AuthenticatedKey {
  /** Requests allowed per window for this key (its override or the default). */
  requestsPerWindow: number;
  windowSeconds: number;
  /** Tokens per minute for this key; 0 means unlimited. */
  tokensPerMinute: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    apiContext: ApiContext | null;
  }
  interface FastifyReply {
    /** Set when the answer is an error: its code, for metrics. */
    gatewayErrorCode: string | null;
    /** Set when the answer is an error: what named it to the client (errors/error-shapes.ts, `clientErrorCode`), for the request log. */
    clientErrorCode: string | null;
  }
  interface FastifyContextConfig {
    /** The client surface of a creation route (`/v1/responses`, `/v1/chat/completions`, `/v1/messages`). */
    surface?: Surface;
  }
}
