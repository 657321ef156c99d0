/**
 * Same-protocol calls (Anthropic Messages client → Anthropic upstream): the client's body goes
 * upstream with its unknown fields, betas and signed thinking blocks intact, and each upstream SSE
 * event goes back as is, alongside the canonical events it carries for the usage meter. Only what
 * the gateway must control is touched (docs/wire-protocols.md §4.2): the model name, the output cap
 * (with a thinking budget kept below it, as Anthropic requires), and the service tier (standard
 * only: one price per model, so a pass-through cannot buy a dearer tier at the flat price).
 */
import { isRecord, parseJson } from '../../lib/json-value.js';
import { sseFrame, sseFrameOfLines } from '../../protocol/sse-frame.js';
import type { PassthroughCall, PassthroughFrame, PassthroughResult } from '../provider.js';
import { CUT_SHORT } from '../shared/canonical-reader.js';
import { UnreadableStreamError } from '../shared/stream-translator.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';
import { failureFrame } from '../shared/passthrough-frames.js';
import { failureText, PassthroughReader, type PassthroughFramer } from '../shared/passthrough-reader.js';
import { MessagesStreamTranslator, messageObjectEvents } from './messages-stream.js';
import { ANTHROPIC_API, type MessagesWire } from './messages-wire.js';
import { clientModelOf, replaceModelName, withClientModel } from '../shared/model-name.js';

type BodyCall = Pick<PassthroughCall, 'body' | 'upstreamModel' | 'maxOutputTokens' | 'stream'>;

/** The Messages body to send upstream: model replaced, output capped, standard tier. */
export function prepareMessagesBody(call: BodyCall): Record<string, unknown> {
  const body: Record<string, unknown> = { ...call.body, model: call.upstreamModel, service_tier: 'standard_only' };
  const maxTokens = typeof body.max_tokens === 'number' ? Math.min(body.max_tokens, call.maxOutputTokens) : call.maxOutputTokens;
  body.max_tokens = maxTokens;
  const thinking = body.thinking;
  if (isRecord(thinking) && thinking.type === 'enabled' && typeof thinking.budget_tokens === 'number' && thinking.budget_tokens >= maxTokens) {
    // Anthropic wants budget_tokens < max_tokens; the cap may have cut max_tokens below it.
    body.thinking = { ...thinking, budget_tokens: Math.max(1, maxTokens - 1) };
  }
  if (call.stream || body.stream !== undefined) body.stream = call.stream;
  return body;
}

/** Runs a pass-through call; resolves once the upstream answered 200 (UpstreamError otherwise). */
export async function runMessagesPassthrough(client: UpstreamHttpClient, call: PassthroughCall, wire: MessagesWire = ANTHROPIC_API): Promise<PassthroughResult> {
  const signal = call.signal;
  const response = await client.post(wire.path(call.upstreamModel, call.stream), wire.body(prepareMessagesBody(call)), {
    signal,
    requestId: call.requestId,
    stream: call.stream,
    ...(call.headers === undefined ? {} : { extraHeaders: call.headers }),
  });

  if (!call.stream || response.mediaType === 'application/json') {
    const json = await client.readJsonObject(response, signal);
    if (call.stream) throw client.failure('protocol', 'upstream answered a stream request with a JSON body');
    try {
      return { kind: 'json', body: withClientModel(json, clientModelOf(call.body, call.upstreamModel)), events: messageObjectEvents(json) };
    } catch (error) {
      if (error instanceof UnreadableStreamError) throw client.failure('protocol', error.message, { cause: error });
      throw error;
    }
  }
  // Releasing the frames destroys the body, which stops the upstream call.
  return { kind: 'stream', frames: new PassthroughReader(response.body, new MessagesFramer(client, clientModelOf(call.body, call.upstreamModel))) };
}

/**
 * Upstream SSE events → frames, each forwarded exactly as received (`event:` + `data:`), but for
 * the model `message_start` names: the one the client asked for (providers/shared/model-name.ts).
 */
export class MessagesFramer implements PassthroughFramer {
  readonly #translator = new MessagesStreamTranslator();
  readonly #client: UpstreamHttpClient;
  readonly #clientModel: string;

  constructor(client: UpstreamHttpClient, clientModel: string) {
    this.#client = client;
    this.#clientModel = clientModel;
  }

  frame(event: string | undefined, data: string, text: string): PassthroughFrame {
    const translator = this.#translator;
    const events = translator.translate({ event, data });
    const error = events.find((candidate) => candidate.type === 'error');
    // Replaced by the gateway's own error event: the upstream's may name things the client must not see.
    if (error !== undefined) return failureFrame({ message: this.#client.safeText(error.message), inBand: true });
    const parsed = parseJson(data);
    const type = parsed.ok && isRecord(parsed.value) && typeof parsed.value.type === 'string' ? parsed.value.type : undefined;
    const sent = type === 'message_start' && parsed.ok ? renamed(data, parsed.value, this.#clientModel) : data;
    const frame: PassthroughFrame = { sse: sent === data && event !== undefined ? text : sseFrameOfLines(event ?? type, sent), events };
    if (translator.complete) frame.last = true;
    return frame;
  }

  end(error: unknown): PassthroughFrame {
    // The answer is whole once `message_delta` said why it stopped; only `message_stop` was lost.
    const closing = this.#translator.endOfBody();
    if (closing !== undefined) return { sse: sseFrame('message_stop', JSON.stringify({ type: 'message_stop' })), events: closing, last: true };
    return failureFrame({ message: error === undefined ? CUT_SHORT : failureText(error) });
  }
}

/** `message_start`'s text with its message naming `clientModel`. */
function renamed(data: string, payload: unknown, clientModel: string): string {
  const message = isRecord(payload) && isRecord(payload.message) ? payload.message : undefined;
  if (message === undefined || typeof message.model !== 'string' || message.model === clientModel) return data;
  return replaceModelName(data, message.model, clientModel) ?? JSON.stringify({ ...(payload as Record<string, unknown>), message: { ...message, model: clientModel } });
}
