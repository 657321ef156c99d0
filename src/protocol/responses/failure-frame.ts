/**
 * How a Responses stream that failed after its first frame ends (docs/wire-protocols.md §2.5), in
 * one place for both kinds of route: the translated encoder's `fail` and a pass-through whose
 * upstream broke off both end with this frame.
 */
import type { Usage } from '../canonical.js';
import { sseFrame } from '../sse-frame.js';
import { usageObject } from './response-settings.js';

/** What the failure tells the client: the catalogue's wire code, message and (for `error`) param. */
export interface ResponsesFailure {
  code: string;
  message: string;
  param?: string | null;
}

/**
 * The response as last announced, now `failed` with the error and the usage billed; what
 * `response.failed` carries (and what a stored response keeps).
 */
export function failedResponse(snapshot: Record<string, unknown>, failure: ResponsesFailure, usage: Usage): Record<string, unknown> {
  return { ...snapshot, status: 'failed', error: { code: failure.code, message: failure.message }, usage: usageObject(usage) };
}

/**
 * `response.failed` numbered after the last event sent; without a response announced to attach it
 * to, the top-level `error` event (flat `code`, `message`, `param`).
 */
export function responsesFailureFrame(failure: ResponsesFailure, sequenceNumber: number, response: Record<string, unknown> | undefined): string {
  if (response !== undefined) return sseFrame('response.failed', JSON.stringify({ type: 'response.failed', sequence_number: sequenceNumber, response }));
  return sseFrame('error', JSON.stringify({ type: 'error', sequence_number: sequenceNumber, code: failure.code, message: failure.message, param: failure.param }));
}
