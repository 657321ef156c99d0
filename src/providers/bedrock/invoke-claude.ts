/**
 * Claude through Bedrock's InvokeModel and InvokeModelWithResponseStream (docs/wire-protocols.md
 * §18.6): the body is Anthropic's Messages body, without `model` (it is in the path) and `stream`
 * (the operation says it), with `anthropic_version: "bedrock-2023-05-31"` and Anthropic's betas in
 * `anthropic_beta`; a whole answer is Anthropic's Message, and a stream is an event stream of
 * `chunk` events whose `bytes` are the base64 of one Messages stream event's JSON. Those events go
 * through Anthropic's own stream translator (canonical path) and pass-through framer (a Messages
 * client), so `/v1/messages` keeps thinking, caching and tool use as Claude speaks them.
 */
import { isRecord, parseJson } from '../../lib/json-value.js';
import type { SseEvent } from '../../lib/sse-decoder.js';
import { sseFrameOfLines } from '../../protocol/sse-frame.js';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import type { PassthroughCall, PassthroughFrame, PassthroughResult } from '../provider.js';
import { messageObjectEvents, MessagesStreamTranslator } from '../anthropic/messages-stream.js';
import { MessagesFramer, prepareMessagesBody } from '../anthropic/passthrough.js';
import { clientModelOf, withClientModel } from '../shared/model-name.js';
import { failureFrame } from '../shared/passthrough-frames.js';
import { PassthroughReader, type PassthroughFramer } from '../shared/passthrough-reader.js';
import { UnreadableStreamError, type StreamTranslator } from '../shared/stream-translator.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';
import { exceptionMessage, isFailureEvent } from './converse-stream.js';
import { awsSdk } from './aws-sdk.js';
import { EventStreamSplitter } from './event-stream.js';

/** The `anthropic_version` Bedrock's Claude models take. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** An Anthropic Messages body as InvokeModel takes it (see the file comment); `betas` from the client's `anthropic-beta`. */
export function invokeBody(messagesBody: Readonly<{ model?: unknown; stream?: unknown; service_tier?: unknown }>, betas?: string): Record<string, unknown> {
  const { model: _model, stream: _stream, service_tier: _tier, ...body } = messagesBody;
  const beta = betas === undefined ? [] : betas.split(',').map((name) => name.trim()).filter((name) => name !== '');
  return { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...body, ...(beta.length === 0 ? {} : { anthropic_beta: beta }) };
}

/** The path of an invoke operation for a model id. */
export function invokePath(modelId: string, stream: boolean): string {
  return `/model/${encodeURIComponent(modelId)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`;
}

/** The Messages stream event a `chunk` carries, with its `type` as the event name. */
export function chunkEvent(data: string): SseEvent {
  const parsed = parseJson(data);
  const bytes = parsed.ok && isRecord(parsed.value) ? parsed.value.bytes : undefined;
  if (typeof bytes !== 'string') throw new UnreadableStreamError('The upstream sent a chunk event without bytes.');
  const inner = Buffer.from(bytes, 'base64').toString('utf8');
  const payload = parseJson(inner);
  const type = payload.ok && isRecord(payload.value) && typeof payload.value.type === 'string' ? payload.value.type : undefined;
  if (type === undefined) throw new UnreadableStreamError('The upstream sent a chunk that is not a Messages stream event.');
  return { event: type, data: inner };
}

/** InvokeModelWithResponseStream → canonical events, through Anthropic's stream translator. */
export class InvokeStreamTranslator implements StreamTranslator {
  readonly #messages = new MessagesStreamTranslator();

  get complete(): boolean {
    return this.#messages.complete;
  }

  translate(event: SseEvent): CanonicalEvent[] {
    const name = event.event ?? '';
    if (isFailureEvent(name)) return [{ type: 'error', code: 'upstream_error', message: exceptionMessage(name, event.data) }];
    // Events other than `chunk` are newer than this code.
    return name === 'chunk' ? this.#messages.translate(chunkEvent(event.data)) : [];
  }

  endOfBody(): CanonicalEvent[] | undefined {
    return this.#messages.endOfBody();
  }
}

/** A Messages client's call on Claude through InvokeModel(WithResponseStream); resolves once Bedrock answered 200. */
export async function runInvokePassthrough(client: UpstreamHttpClient, call: PassthroughCall): Promise<PassthroughResult> {
  const body = invokeBody(prepareMessagesBody(call), call.headers?.['anthropic-beta']);
  const clientModel = clientModelOf(call.body, call.upstreamModel);
  const options = { signal: call.signal, requestId: call.requestId, stream: call.stream };
  if (!call.stream) {
    const answer = await client.postForWhole(invokePath(call.upstreamModel, false), body, options);
    const json = client.parseJsonObject(answer.text);
    try {
      return { kind: 'json', body: withClientModel(json, clientModel), events: messageObjectEvents(json) };
    } catch (error) {
      if (error instanceof UnreadableStreamError) throw client.failure('protocol', error.message, { cause: error });
      throw error;
    }
  }
  const sdk = await awsSdk();
  const response = await client.post(invokePath(call.upstreamModel, true), body, options);
  if (response.mediaType !== 'application/vnd.amazon.eventstream') {
    response.body.destroy();
    throw client.failure('protocol', `upstream answered a stream request with ${response.mediaType || 'no content type'}`);
  }
  return { kind: 'stream', frames: new PassthroughReader(response.body, new InvokeFramer(client, new MessagesFramer(client, clientModel)), new EventStreamSplitter(sdk)) };
}

/** Event-stream messages → the Messages frames their chunks carry, each as Anthropic frames it. */
class InvokeFramer implements PassthroughFramer {
  readonly #client: UpstreamHttpClient;
  readonly #messages: MessagesFramer;

  constructor(client: UpstreamHttpClient, messages: MessagesFramer) {
    this.#client = client;
    this.#messages = messages;
  }

  frame(event: string | undefined, data: string): PassthroughFrame | undefined {
    const name = event ?? '';
    if (isFailureEvent(name)) return failureFrame({ message: this.#client.safeText(exceptionMessage(name, data)), inBand: true });
    if (name !== 'chunk') return undefined;
    const inner = chunkEvent(data);
    return this.#messages.frame(inner.event, inner.data, sseFrameOfLines(inner.event, inner.data));
  }

  end(error: unknown): PassthroughFrame {
    return this.#messages.end(error);
  }
}
