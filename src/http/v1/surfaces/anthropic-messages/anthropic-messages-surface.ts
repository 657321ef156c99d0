/**
 * The Anthropic Messages surface (`POST /v1/messages`, Claude Code and the Anthropic SDKs): its
 * decoding (with the client headers a pass-through forwards), its model check, its encoder and its
 * failure frame.
 */
import { errorBody } from '../../../../errors/error-shapes.js';
import { GatewayError } from '../../../../errors/gateway-error.js';
import { idSuffix } from '../../../../lib/ids.js';
import { decodeMessagesRequest } from '../../../../protocol/anthropic-messages/decode-request.js';
import { MessagesEncoder } from '../../../../protocol/anthropic-messages/encoder.js';
import { unsupportedServerTool } from '../../../../protocol/anthropic-messages/server-tools.js';
import { sseFrame } from '../../../../protocol/sse-frame.js';
import { effortFor } from '../../../../routing/catalog.js';
import { withHostedToolPolicy } from '../hosted-tool-policy.js';
import type { SurfaceAdapter } from '../surface.js';

export interface MessagesExtras {
  /** Thinking blocks go to the client without their text. */
  omitThinking: boolean;
  /** Client headers a pass-through forwards to the upstream. */
  upstreamHeaders: Record<string, string>;
}

/** Client headers that change what an Anthropic upstream accepts, forwarded on pass-through. */
const FORWARDED_ANTHROPIC_HEADERS = ['anthropic-beta'] as const;

/** A stream that failed after its first frame (docs/wire-protocols.md §4.5): the in-band `error` event, after which nothing follows. */
export function messagesFailureFrame(error: GatewayError): string {
  return sseFrame('error', JSON.stringify(errorBody(error, 'anthropic')));
}

export const anthropicMessagesSurface: SurfaceAdapter<MessagesExtras> = {
  surface: 'anthropic-messages',
  decode(body, headers) {
    const decoded = decodeMessagesRequest(body);
    const upstreamHeaders: Record<string, string> = {};
    for (const name of FORWARDED_ANTHROPIC_HEADERS) {
      const value = headers[name];
      if (value !== undefined) upstreamHeaders[name] = Array.isArray(value) ? value.join(',') : value;
    }
    return { request: decoded.request, clientWantsUsage: true, extras: { omitThinking: decoded.omitThinking, upstreamHeaders } };
  },
  checkAgainstModel(decoded, model) {
    // Server tools (Claude Code's web search) under the model's `hosted_tools` setting.
    const policed = withHostedToolPolicy(decoded.request, model, 'anthropic-messages', unsupportedServerTool);
    const checked = policed === decoded.request ? decoded : { ...decoded, request: policed };
    const effort = policed.reasoningEffort;
    if (effort === undefined || effortFor(model, effort) === 'use') return checked;
    // Claude Code asks for thinking on every turn; a model without reasoning answers without it
    // (as Anthropic's own models without thinking do) rather than refusing every turn.
    if (model.reasoningEfforts.size === 0) {
      const { reasoningEffort: _dropped, ...request } = policed;
      return { ...decoded, request };
    }
    const allowed = [...model.reasoningEfforts].map((value) => `'${value}'`).join(', ');
    const message = `Unsupported value: '${effort}' is not supported with the model '${model.id}'. Supported values are: ${allowed}.`;
    throw new GatewayError('invalid_request', { message, param: 'output_config.effort', code: 'unsupported_value' });
  },
  upstreamHeaders: (decoded) => decoded.extras.upstreamHeaders,
  createEncoder(decoded) {
    const encoder = new MessagesEncoder({
      id: `msg_${idSuffix()}`,
      model: decoded.request.model,
      stream: decoded.request.stream,
      omitThinking: decoded.extras.omitThinking,
    });
    return {
      startsWithInput: true,
      start: (input) => encoder.start(input),
      push: (event) => encoder.push(event),
      finish: (usage) => encoder.finish(usage),
      fail: (error) => [messagesFailureFrame(error)],
      body: (usage) => encoder.message(usage),
    };
  },
  passthroughFailure: (error) => ({ sse: messagesFailureFrame(error) }),
};
