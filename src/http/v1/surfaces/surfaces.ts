/**
 * The client surfaces behind one shape, so one handler serves them all: decode the body, check
 * model-specific options, and encode canonical events back into the surface's wire format.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../../errors/gateway-error.js';
import { idSuffix, newItemId } from '../../../lib/ids.js';
import { decodeMessagesRequest } from '../../../protocol/anthropic-messages/decode-request.js';
import { MessagesEncoder } from '../../../protocol/anthropic-messages/encoder.js';
import type { CanonicalEvent, CanonicalRequest, Surface, Usage } from '../../../protocol/canonical.js';
import { decodeChatRequest } from '../../../protocol/chat-completions/decode-request.js';
import { ChatCompletionsEncoder } from '../../../protocol/chat-completions/encoder.js';
import { decodeResponsesBody } from '../../../protocol/responses/decode-request.js';
import { unsupportedHostedTool } from '../../../protocol/responses/decode-tools.js';
import { ResponsesEncoder } from '../../../protocol/responses/encoder.js';
import type { ResponsesEcho } from '../../../protocol/responses/response-settings.js';
import type { ModelEntry } from '../../../routing/catalog.js';
import type { PassthroughFailure } from '../../../providers/provider.js';
import type { OpenedAnswer } from '../../../routing/router.js';
import { chatFailureFrame, failedResponse, messagesFailureFrame, responsesFailureFrame } from './stream-failures.js';

export interface DecodedBody {
  request: CanonicalRequest;
  /** Chat: the client asked for the usage chunk. */
  clientWantsUsage: boolean;
  /** Responses: persist the response (`store`). */
  store: boolean;
  previousResponseId: string | null;
  metadata: Record<string, string>;
  /** Responses: request settings the response object echoes. */
  responsesEcho?: ResponsesEcho;
  /** Anthropic Messages: thinking blocks go to the client without their text. */
  omitThinking?: boolean;
  /** Client headers a pass-through forwards to the upstream (Anthropic's `anthropic-beta`). */
  upstreamHeaders?: Record<string, string>;
}

/** Encodes one answer. In non-stream mode the frame lists are empty and `body()` is the answer. */
export interface ClientEncoder {
  start(): string[];
  push(event: CanonicalEvent): string[];
  finish(usage: Usage): string[];
  /** Ends a stream that failed mid-way with `error` (stream-failures.ts), billed at `usage`. */
  fail(error: GatewayError, usage: Usage): string[];
  /**
   * The complete answer object; call after `finish` (or `fail`). For a stream it is what the final
   * event carries, which is what a stored response keeps.
   */
  body(usage: Usage): Record<string, unknown>;
}

export interface SurfaceAdapter {
  surface: Surface;
  decode(body: unknown, headers: IncomingHttpHeaders): DecodedBody;
  /** Model-specific checks that are 400s (not 503s), run once the model is known to exist. */
  checkAgainstModel(decoded: DecodedBody, model: ModelEntry): void;
  createEncoder(decoded: DecodedBody, createdAt: number): ClientEncoder;
  /**
   * The frame that ends a failed pass-through stream, the same as a translated route's failure
   * (stream-failures.ts); for Responses also the failed response it carries, to be stored.
   */
  passthroughFailure(error: GatewayError, failure: PassthroughFailure, usage: Usage): { sse: string; response?: Record<string, unknown> };
}

export const responsesSurface: SurfaceAdapter = {
  surface: 'responses',
  decode(body) {
    const decoded = decodeResponsesBody(body);
    return { ...decoded, clientWantsUsage: true, responsesEcho: decoded.echo };
  },
  checkAgainstModel(decoded, model) {
    applyHostedToolPolicy(decoded.request, model);
    const effort = decoded.request.reasoningEffort;
    if (effort === undefined || model.reasoningEfforts.has(effort)) return;
    const allowed = [...model.reasoningEfforts];
    const message =
      allowed.length === 0
        ? `Reasoning effort is not supported with the model '${model.id}'.`
        : `Unsupported value: '${effort}' is not supported with the model '${model.id}'. Supported values are: ${allowed.map((value) => `'${value}'`).join(', ')}.`;
    throw new GatewayError('invalid_request', { message, param: 'reasoning.effort', code: 'unsupported_value' });
  },
  createEncoder(decoded, createdAt) {
    const encoder = new ResponsesEncoder({
      responseId: `resp_${idSuffix()}`,
      createdAt,
      model: decoded.request.model,
      request: decoded.request,
      stream: decoded.request.stream,
      store: decoded.store,
      metadata: decoded.metadata,
      previousResponseId: decoded.previousResponseId,
      idGenerator: newItemId,
      ...(decoded.responsesEcho === undefined ? {} : { echo: decoded.responsesEcho }),
    });
    return {
      start: () => encoder.start(),
      push: (event) => encoder.push(event),
      finish: (usage) => encoder.finish(usage),
      fail: (error, usage) => encoder.fail(error.wireCode, error.message, usage),
      body: () => encoder.response(),
    };
  },
  passthroughFailure(error, failure, usage) {
    const response = failure.response === undefined ? undefined : failedResponse(failure.response, error, usage);
    const sse = responsesFailureFrame(error, failure.sequenceNumber ?? 0, response);
    return response === undefined ? { sse } : { sse, response };
  },
};

/**
 * The model's `hosted_tools` setting: `map` lets translated routes use their own equivalents;
 * `refuse` answers 400 naming the first hosted tool when any target of the model would translate
 * the request (a Responses pass-through runs them all, so a model served only that way never
 * refuses).
 */
function applyHostedToolPolicy(request: CanonicalRequest, model: ModelEntry): void {
  const hosted = request.hostedTools ?? [];
  if (hosted.length === 0) return;
  if (model.hostedTools === 'map') request.mapHostedTools = true;
  const translates = model.targets.some((target) => target.provider.speaksNatively?.('responses') !== true);
  if (model.hostedTools === 'refuse' && translates && hosted[0] !== undefined) throw unsupportedHostedTool(hosted[0]);
}

/** The response header naming the hosted tools the chosen route left out (none on pass-through). */
export const DROPPED_TOOLS_HEADER = 'x-tollgate-dropped-tools';

export function droppedToolsHeaders(opened: OpenedAnswer, request: CanonicalRequest): Record<string, string> {
  if (opened.kind === 'passthrough') return {};
  const provider = opened.target.provider;
  const dropped = (request.hostedTools ?? []).filter((tool) => provider.keepsHostedTool?.(tool, request) !== true).map((tool) => tool.type);
  return dropped.length === 0 ? {} : { [DROPPED_TOOLS_HEADER]: [...new Set(dropped)].join(',') };
}

export const chatCompletionsSurface: SurfaceAdapter = {
  surface: 'chat-completions',
  decode(body) {
    const decoded = decodeChatRequest(body);
    return { request: decoded.request, clientWantsUsage: decoded.includeUsage, store: false, previousResponseId: null, metadata: {} };
  },
  checkAgainstModel() {
    // Reasoning options are refused by the decoder on this surface.
  },
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

/** Client headers that change what an Anthropic upstream accepts, forwarded on pass-through. */
const FORWARDED_ANTHROPIC_HEADERS = ['anthropic-beta'] as const;

export const anthropicMessagesSurface: SurfaceAdapter = {
  surface: 'anthropic-messages',
  decode(body, headers) {
    const decoded = decodeMessagesRequest(body);
    const upstreamHeaders: Record<string, string> = {};
    for (const name of FORWARDED_ANTHROPIC_HEADERS) {
      const value = headers[name];
      if (value !== undefined) upstreamHeaders[name] = Array.isArray(value) ? value.join(',') : value;
    }
    return { request: decoded.request, clientWantsUsage: true, store: false, previousResponseId: null, metadata: {}, omitThinking: decoded.omitThinking, upstreamHeaders };
  },
  checkAgainstModel(decoded, model) {
    const effort = decoded.request.reasoningEffort;
    if (effort === undefined || model.reasoningEfforts.has(effort)) return;
    // Claude Code asks for thinking on every turn; a model without reasoning answers without it
    // (as Anthropic's own models without thinking do) rather than refusing every turn.
    if (model.reasoningEfforts.size === 0) {
      delete decoded.request.reasoningEffort;
      return;
    }
    const allowed = [...model.reasoningEfforts].map((value) => `'${value}'`).join(', ');
    const message = `Unsupported value: '${effort}' is not supported with the model '${model.id}'. Supported values are: ${allowed}.`;
    throw new GatewayError('invalid_request', { message, param: 'output_config.effort', code: 'unsupported_value' });
  },
  createEncoder(decoded) {
    const encoder = new MessagesEncoder({
      id: `msg_${idSuffix()}`,
      model: decoded.request.model,
      stream: decoded.request.stream,
      omitThinking: decoded.omitThinking === true,
    });
    return {
      start: () => encoder.start(),
      push: (event) => encoder.push(event),
      finish: (usage) => encoder.finish(usage),
      fail: (error) => [messagesFailureFrame(error)],
      body: (usage) => encoder.message(usage),
    };
  },
  passthroughFailure: (error) => ({ sse: messagesFailureFrame(error) }),
};
