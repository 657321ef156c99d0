/**
 * The Chat Completions surface (`POST /v1/chat/completions`): its decoding, its encoder and its
 * failure frame. It has no extras beyond whether the client asked for the usage chunk.
 */
import { errorBody } from '../../../../errors/error-shapes.js';
import type { GatewayError } from '../../../../errors/gateway-error.js';
import { idSuffix } from '../../../../lib/ids.js';
import { decodeChatRequest } from '../../../../protocol/chat-completions/decode-request.js';
import { ChatCompletionsEncoder } from '../../../../protocol/chat-completions/encoder.js';
import { sseFrame } from '../../../../protocol/sse-frame.js';
import type { SurfaceAdapter } from '../surface.js';

/**
 * A stream that failed after its first frame (docs/wire-protocols.md §1.5): one chunk whose JSON
 * has a top-level `error`, and no `[DONE]`, so it cannot pass for an end.
 */
export function chatFailureFrame(error: GatewayError): string {
  return sseFrame(undefined, JSON.stringify(errorBody(error, 'openai')));
}

export const chatCompletionsSurface: SurfaceAdapter<undefined> = {
  surface: 'chat-completions',
  decode(body) {
    const decoded = decodeChatRequest(body);
    return { request: decoded.request, clientWantsUsage: decoded.includeUsage, extras: undefined };
  },
  // Reasoning options are refused by the decoder on this surface.
  checkAgainstModel: (decoded) => decoded,
  createEncoder(decoded, createdAt) {
    const encoder = new ChatCompletionsEncoder({
      id: `chatcmpl-${idSuffix()}`,
      created: createdAt,
      model: decoded.request.model,
      stream: decoded.request.stream,
      includeUsage: decoded.clientWantsUsage,
    });
    return {
      start: () => [],
      push: (event) => encoder.push(event),
      finish: (usage) => encoder.finish(usage),
      fail: (error) => [chatFailureFrame(error)],
      body: (usage) => encoder.completion(usage),
    };
  },
  passthroughFailure: (error) => ({ sse: chatFailureFrame(error) }),
};
