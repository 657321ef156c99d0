/**
 * Same-protocol calls (Chat→Chat, Responses→Responses): the client's body goes upstream with its
 * unknown fields intact, and each upstream SSE event goes back to the client as is, alongside the
 * canonical events it carries for the usage meter. Only what the gateway must control is touched:
 * the model name, the output cap, and usage reporting (docs/wire-protocols.md §1.1, §2.1).
 */
import type { CanonicalEvent } from '../../protocol/canonical.js';
import { isRecord, parseJson } from '../../lib/json-value.js';
import { sseFrame, sseFrameOfLines } from '../../protocol/sse-frame.js';
import type { PassthroughCall, PassthroughFrame, PassthroughJson, PassthroughResult } from '../provider.js';
import { CUT_SHORT } from '../shared/canonical-reader.js';
import type { Redactor } from '../shared/redaction.js';
import { UnreadableStreamError } from '../shared/stream-translator.js';
import { failureFrame } from '../shared/passthrough-frames.js';
import { failureText, PassthroughReader, type PassthroughFramer } from '../shared/passthrough-reader.js';
import type { UpstreamHttpClient } from '../shared/upstream-http.js';
import type { EndpointPath } from './endpoint-path.js';
import { ChatChunkReader, chatCompletionMeterEvents, inBandErrorMessage, readChatChunk, type ReadChatChunk } from './chat-wire.js';
import { ResponsesEventReader, responsesObjectMeterEvents } from './responses-wire.js';
import { clientModelOf, renameWholeAnswer, replaceModelName, withClientModel } from '../shared/model-name.js';

type BodyCall = Pick<PassthroughCall, 'body' | 'upstreamModel' | 'maxOutputTokens' | 'stream'> & Pick<PassthroughCall, 'endpoint'>;

/** The Chat body to send upstream: model replaced, output capped, usage forced on streams. */
export function prepareChatBody(call: BodyCall): Record<string, unknown> {
  const body: Record<string, unknown> = { ...call.body, model: call.upstreamModel };
  const cap = call.maxOutputTokens;
  if (typeof body.max_tokens === 'number') {
    // The client chose the older field; keep its choice (some upstreams know only that one).
    body.max_tokens = Math.min(body.max_tokens, cap);
    if (typeof body.max_completion_tokens === 'number') body.max_completion_tokens = Math.min(body.max_completion_tokens, cap);
  } else {
    body.max_completion_tokens = typeof body.max_completion_tokens === 'number' ? Math.min(body.max_completion_tokens, cap) : cap;
  }
  setStream(body, call.stream);
  if (call.stream) body.stream_options = { ...(isRecord(body.stream_options) ? body.stream_options : {}), include_usage: true };
  return body;
}

/**
 * The Responses body to send upstream: model replaced, output capped. A `/responses/compact` body
 * has neither a cap nor a stream flag: only its model is replaced.
 */
export function prepareResponsesBody(call: BodyCall): Record<string, unknown> {
  const body: Record<string, unknown> = { ...call.body, model: call.upstreamModel };
  if (call.endpoint === 'compact') return body;
  const cap = call.maxOutputTokens;
  body.max_output_tokens = typeof body.max_output_tokens === 'number' ? Math.min(body.max_output_tokens, cap) : cap;
  setStream(body, call.stream);
  return body;
}

function setStream(body: Record<string, unknown>, stream: boolean): void {
  if (stream || body.stream !== undefined) body.stream = stream;
}

/**
 * Runs a pass-through call; resolves once the upstream answered 200 (UpstreamError otherwise).
 * `chatBody` turns a Chat body into the one this upstream accepts (a vendor's differences).
 */
export async function runPassthrough(
  client: UpstreamHttpClient,
  pathOf: EndpointPath,
  call: PassthroughCall,
  chatBody: (body: Readonly<Record<string, unknown>>) => Record<string, unknown> = (body) => ({ ...body }),
): Promise<PassthroughResult> {
  const chat = call.surface === 'chat-completions';
  const path = pathOf(chat ? '/chat/completions' : call.endpoint === 'compact' ? '/responses/compact' : '/responses', call.upstreamModel);
  const body = chat ? chatBody(prepareChatBody(call)) : prepareResponsesBody(call);
  // Answers name the model the client asked for (the catalog id), as on every other route.
  const clientModel = clientModelOf(call.body, call.upstreamModel);
  const options = { signal: call.signal, requestId: call.requestId, stream: call.stream };
  if (!call.stream) {
    const answer = await client.postForWhole(path, body, options);
    return wholeAnswer(client, answer.text, chat, clientModel);
  }

  const response = await client.post(path, body, options);
  if (response.mediaType === 'application/json') {
    const json = await client.readJsonObject(response, call.signal);
    // The client is owed a stream; a JSON answer to a stream request is unusable here.
    const detail = json.error === undefined || json.error === null ? 'a JSON body' : `an error: ${inBandErrorMessage(json.error)}`;
    throw client.failure('protocol', `upstream answered a stream request with ${detail}`);
  }
  // Releasing the frames destroys the body, which stops the upstream call (call.signal stops it
  // when the client goes away).
  const framer = chat ? new ChatFramer(call.clientWantsUsage, client.redact, clientModel) : new ResponsesFramer(client.redact, clientModel);
  return { kind: 'stream', frames: new PassthroughReader(response.body, framer) };
}

/**
 * A whole answer: parsed for what the meter and the gateway read (usage, a failure, a stored
 * response), and sent as the upstream's text, but for the model name.
 */
function wholeAnswer(client: UpstreamHttpClient, text: string, chat: boolean, clientModel: string): PassthroughJson {
  const json = client.parseJsonObject(text);
  const events = (chat ? chatCompletionMeterEvents(json) : responsesObjectMeterEvents(json)).map((event) => redactEvent(event, client.redact));
  const upstreamModel = json.model;
  if (typeof upstreamModel !== 'string' || upstreamModel === clientModel) return { kind: 'json', body: json, text, events };
  const body = { ...json, model: clientModel };
  // Written some other way (escapes), the answer is written anew, as the gateway parsed it.
  return { kind: 'json', body, text: renameWholeAnswer(text, upstreamModel, clientModel) ?? JSON.stringify(body), events };
}

/** A UTF-16 surrogate, paired or not. */
const SURROGATE = /[\ud800-\udfff]/;

const DONE_FRAME: PassthroughFrame = Object.freeze({ sse: sseFrame(undefined, '[DONE]'), events: [], last: true });

/** Chat chunks → frames. The upstream's text is forwarded byte for byte, but for the model name. */
export class ChatFramer implements PassthroughFramer {
  readonly #reader = new ChatChunkReader();
  readonly #clientWantsUsage: boolean;
  readonly #redact: Redactor;
  readonly #clientModel: string;
  /** The client's model as a JSON string. */
  readonly #clientModelJson: string;

  constructor(clientWantsUsage: boolean, redact: Redactor, clientModel: string) {
    this.#clientWantsUsage = clientWantsUsage;
    this.#redact = redact;
    this.#clientModel = clientModel;
    this.#clientModelJson = JSON.stringify(clientModel);
  }

  frame(event: string | undefined, data: string, text: string): PassthroughFrame {
    if (data === '[DONE]') return DONE_FRAME;
    const read = readChatChunk(data);
    const events = this.#reader.events(read);
    if (read.error !== undefined) return failureFrame({ message: this.#redact(read.error), inBand: true });
    // The usage chunk was forced on for metering; a client that did not ask for it must not see it.
    if (read.chunk?.choices?.length === 0 && !this.#clientWantsUsage) return { sse: '', events };
    const sent = this.#renamed(data, read);
    // A chunk goes out as `data:` alone (an `event:` line the upstream added is not Chat's).
    return { sse: sent === data && event === undefined ? text : sseFrameOfLines(undefined, sent), events };
  }

  /** The chunk's text naming the client's model: as `renamed` does it, in place when the pattern read it. */
  #renamed(data: string, read: ReadChatChunk): string {
    if (read.parsed !== undefined) return renamed(data, read.parsed, this.#clientModel);
    const model = read.model;
    if (model === undefined || model === this.#clientModel) return data;
    // A chunk the pattern read has one `model` pair. Its text is the model's own unless it holds a
    // surrogate (JSON.stringify escapes a lone one): such a chunk is renamed the general way.
    if (SURROGATE.test(model)) return renamed(data, JSON.parse(data), this.#clientModel);
    return `${data.slice(0, read.modelAt - 1)}${this.#clientModelJson}${data.slice(read.modelAt + model.length + 1)}`;
  }

  end(error: unknown): PassthroughFrame {
    // After the finish chunk the answer is whole: only the usage chunk can have been lost.
    if (this.#reader.finishReason !== undefined) return DONE_FRAME;
    return failureFrame({ message: error === undefined ? CUT_SHORT : failureText(error) });
  }
}

/** Terminal Responses events, whose `response` is the final object. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/** Events whose `response` is a snapshot of the response in progress (what a failure carries). */
const SNAPSHOT_EVENTS = new Set(['response.created', 'response.queued', 'response.in_progress']);

/** Responses events → frames, each forwarded as received (`event:` + `data:`), but for the model name. */
class ResponsesFramer implements PassthroughFramer {
  readonly #reader = new ResponsesEventReader();
  readonly #redact: Redactor;
  readonly #clientModel: string;
  /** The response as last announced, for a failure the gateway ends the stream with. */
  #snapshot: Record<string, unknown> | undefined;

  constructor(redact: Redactor, clientModel: string) {
    this.#redact = redact;
    this.#clientModel = clientModel;
  }

  frame(event: string | undefined, data: string, text: string): PassthroughFrame {
    const parsed = parseJson(data);
    if (!parsed.ok) throw new UnreadableStreamError('The upstream sent a stream event that is not JSON.');
    const sequenceNumber = this.#reader.nextSequenceNumber;
    const events = this.#reader.read(parsed.value).map((canonical) => redactEvent(canonical, this.#redact));
    const type = isRecord(parsed.value) && typeof parsed.value.type === 'string' ? parsed.value.type : undefined;
    if (event === 'error' || type === 'error') {
      // Replaced by the gateway's own failure: the upstream's may name things the client must not see.
      const error = events.find((canonical) => canonical.type === 'error');
      return this.#failed(error?.message ?? 'The upstream reported an error.', sequenceNumber);
    }
    // `response.failed` is a normal terminal event of the protocol; only its text is cleaned.
    const received = renamed(data, parsed.value, this.#clientModel);
    const sent = type === 'response.failed' ? this.#redact(received) : received;
    const frame: PassthroughFrame = { sse: sent === data && event !== undefined ? text : sseFrameOfLines(event ?? type, sent), events };
    if (type !== undefined && FINAL_EVENTS.has(type)) {
      frame.last = true;
      // The object the client receives: for a failure, its cleaned text (parsed again, rarely).
      const payload = sent === data ? parsed : parseJson(sent);
      const response = payload.ok && isRecord(payload.value) ? payload.value.response : undefined;
      if (isRecord(response)) frame.finalResponse = response;
    } else if (type !== undefined && SNAPSHOT_EVENTS.has(type) && isRecord(parsed.value) && isRecord(parsed.value.response)) {
      this.#snapshot = parsed.value.response;
    }
    return frame;
  }

  end(error: unknown): PassthroughFrame {
    return this.#failed(error === undefined ? CUT_SHORT : failureText(error), this.#reader.nextSequenceNumber);
  }

  #failed(message: string, sequenceNumber: number): PassthroughFrame {
    const snapshot = this.#snapshot;
    return failureFrame({ message, sequenceNumber, ...(snapshot === undefined ? {} : { response: withClientModel(snapshot, this.#clientModel) }) });
  }
}

/**
 * The event's text with the model named as the client asked for it: a chunk's `model`, or the
 * `model` of the response object a Responses event carries. Only that value changes, so every
 * other byte is still the upstream's (a quote inside a JSON string is escaped, so the pattern
 * cannot match text).
 */
function renamed(data: string, payload: unknown, clientModel: string): string {
  if (!isRecord(payload)) return data;
  const response = isRecord(payload.response) ? payload.response : undefined;
  const upstreamModel = typeof payload.model === 'string' ? payload.model : response?.model;
  if (typeof upstreamModel !== 'string' || upstreamModel === clientModel) return data;
  const replaced = replaceModelName(data, upstreamModel, clientModel);
  if (replaced !== undefined) return replaced;
  // Written some other way (escapes): the event is written anew.
  return JSON.stringify(response === undefined ? { ...payload, model: clientModel } : { ...payload, response: { ...response, model: clientModel } });
}


function redactEvent(event: CanonicalEvent, redact: Redactor): CanonicalEvent {
  return event.type === 'error' ? { ...event, message: redact(event.message) } : event;
}
