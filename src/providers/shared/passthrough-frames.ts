/**
 * What every pass-through's frames are built from: an upstream event's text sent on as it came,
 * and the frame that tells the gateway the stream failed (it renders the failure itself, from its
 * error catalogue, in the client's protocol).
 */
import type { PassthroughFailure, PassthroughFrame } from '../provider.js';

/**
 * An SSE event as the upstream framed it: `event:` when it had one, its data, a blank line. Data
 * that held line breaks arrived as several `data:` lines and leaves the same way; the usual event
 * is one line and costs one concatenation.
 */
export function sseText(event: string | undefined, data: string): string {
  const dataLines = data.includes('\n') ? data.split('\n').map((line) => `data: ${line}\n`).join('') : `data: ${data}\n`;
  return event === undefined ? `${dataLines}\n` : `event: ${event}\n${dataLines}\n`;
}

/** The frame that ends a failed stream: nothing of its own to send, the error for the meter. */
export function failureFrame(failure: PassthroughFailure): PassthroughFrame {
  return { sse: '', events: [{ type: 'error', code: 'upstream_error', message: failure.message }], failure };
}
