/**
 * What every pass-through's frames are built from: an upstream event's text sent on as it came,
 * and the frame that tells the gateway the stream failed (it renders the failure itself, from its
 * error catalogue, in the client's protocol).
 */
import type { PassthroughFailure, PassthroughFrame } from '../provider.js';

/** The frame that ends a failed stream: nothing of its own to send, the error for the meter. */
export function failureFrame(failure: PassthroughFailure): PassthroughFrame {
  return { sse: '', events: [{ type: 'error', code: 'upstream_error', message: failure.message }], failure };
}
