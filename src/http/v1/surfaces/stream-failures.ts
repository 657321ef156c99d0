/**
 * A stream that fails after its first frame cannot change its status any more: the failure is told
 * inside the stream, in the client's protocol, and the stream ends (docs/wire-protocols.md §1.5,
 * §2.5, §4.5). Every such failure is a `GatewayError` from the one catalogue, rendered here, the
 * same way whether the route passes the upstream's frames through or translates them.
 */
import { GatewayError } from '../../../errors/gateway-error.js';
import type { Usage } from '../../../protocol/canonical.js';
import { sseFrame } from '../../../protocol/sse-frame.js';
import { failedResponse as failedResponseObject, responsesFailureFrame as responsesFailureText } from '../../../protocol/responses/failure-frame.js';
import { errorBody } from '../../../errors/error-shapes.js';

/** The usual mid-stream failure: the upstream broke off (its message says how, redacted). */
export function upstreamFailure(message: string): GatewayError {
  return new GatewayError('upstream_error', { message });
}

/** Chat: one chunk whose JSON has a top-level `error`, and no `[DONE]`, so it cannot pass for an end. */
export function chatFailureFrame(error: GatewayError): string {
  return sseFrame(undefined, JSON.stringify(errorBody(error, 'openai')));
}

/** Anthropic Messages: the in-band `error` event, after which nothing follows. */
export function messagesFailureFrame(error: GatewayError): string {
  return sseFrame('error', JSON.stringify(errorBody(error, 'anthropic')));
}

/**
 * Responses: the response as last announced, now `failed` with the error and the usage billed;
 * what `response.failed` carries (and what a stored response keeps).
 */
export function failedResponse(snapshot: Record<string, unknown>, error: GatewayError, usage: Usage): Record<string, unknown> {
  return failedResponseObject(snapshot, { code: error.wireCode, message: error.message }, usage);
}

/**
 * Responses: `response.failed` numbered after the last event sent; without a response announced to
 * attach it to, the top-level `error` event (flat `code`, `message`, `param`).
 */
export function responsesFailureFrame(error: GatewayError, sequenceNumber: number, response: Record<string, unknown> | undefined): string {
  return responsesFailureText({ code: error.wireCode, message: error.message, param: error.param }, sequenceNumber, response);
}
