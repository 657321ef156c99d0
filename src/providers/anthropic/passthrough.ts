/**
 * Same-protocol calls (Anthropic Messages client → Anthropic upstream): the client's body goes
 * upstream with its unknown fields, betas and signed thinking blocks intact, and each upstream SSE
 * event goes back as is, alongside the canonical events it carries for the usage meter. Only what
 * the gateway must control is touched (docs/wire-protocols.md §4.2): the model name, the output cap
 * (with a thinking budget kept below it, as Anthropic requires), and the service tier (standard
 * only: one price per model, so a pass-through cannot buy a dearer tier at the flat price).
 */
import { isRecord, parseJson } from '../../lib/json-value.js';
import { decodeSse } from '../../lib/sse-decoder.js';
import type { PassthroughCall, PassthroughFrame, PassthroughResult } from '../provider.js';
import { CUT_SHORT } from '../shared/canonical-stream.js';
import { UnreadableStreamError } from '../shared/stream-translator.js';
import { describeStreamFailure } from '../shared/transport-failure.js';
import type { UpstreamBody, UpstreamHttpClient } from '../shared/upstream-http.js';
import { failureFrame, sseText } from '../shared/passthrough-frames.js';
import { withTeardown } from '../shared/teardown.js';
import { MessagesStreamTranslator, messageObjectEvents } from './messages-stream.js';
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
export async function runMessagesPassthrough(client: UpstreamHttpClient, call: PassthroughCall): Promise<PassthroughResult> {
  const controller = new AbortController();
  const signal = AbortSignal.any([call.signal, controller.signal]);
  const response = await client.post('/messages', prepareMessagesBody(call), {
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
  const teardown = (): void => {
    controller.abort();
    response.body.destroy();
  };
  return { kind: 'stream', frames: withTeardown(messageFrames(response.body, client, clientModelOf(call.body, call.upstreamModel)), teardown) };
}

/**
 * Upstream SSE events → frames, each re-framed as `event:` + `data:` exactly as received, but for
 * the model `message_start` names: the one the client asked for (providers/shared/model-name.ts).
 */
async function* messageFrames(body: UpstreamBody, client: UpstreamHttpClient, clientModel: string): AsyncGenerator<PassthroughFrame> {
  const translator = new MessagesStreamTranslator();
  let failure: string | undefined;
  try {
    for await (const sse of decodeSse(body)) {
      if (translator.complete) continue;
      const events = translator.translate(sse);
      const error = events.find((event) => event.type === 'error');
      if (error !== undefined) {
        // Replaced by the gateway's own error event: the upstream's may name things the client must not see.
        yield failureFrame({ message: client.safeText(error.message) });
        return;
      }
      const parsed = parseJson(sse.data);
      const type = parsed.ok && isRecord(parsed.value) && typeof parsed.value.type === 'string' ? parsed.value.type : undefined;
      const frame: PassthroughFrame = { sse: sseText(sse.event ?? type, type === 'message_start' && parsed.ok ? renamed(sse.data, parsed.value, clientModel) : sse.data), events };
      if (translator.complete) frame.last = true;
      yield frame;
    }
  } catch (error) {
    failure = error instanceof UnreadableStreamError ? error.message : describeStreamFailure(error);
  }
  if (translator.complete) return;
  // The answer is whole once `message_delta` said why it stopped; only `message_stop` was lost.
  const closing = translator.endOfBody();
  if (closing !== undefined) {
    yield { sse: sseText('message_stop', JSON.stringify({ type: 'message_stop' })), events: closing, last: true };
    return;
  }
  yield failureFrame({ message: failure ?? CUT_SHORT });
}

/** `message_start`'s text with its message naming `clientModel`. */
function renamed(data: string, payload: unknown, clientModel: string): string {
  const message = isRecord(payload) && isRecord(payload.message) ? payload.message : undefined;
  if (message === undefined || typeof message.model !== 'string' || message.model === clientModel) return data;
  return replaceModelName(data, message.model, clientModel) ?? JSON.stringify({ ...(payload as Record<string, unknown>), message: { ...message, model: clientModel } });
}
