/**
 * Bedrock's streamed answers (`application/vnd.amazon.eventstream`, docs/wire-protocols.md §18.4)
 * cut into events: each binary message is found by its length prelude and decoded (checksums,
 * headers) by AWS's own codec, one message at a time, so a stream holds at most one unfinished
 * message. A message becomes an event named after what it is, with its payload as text:
 * - `:message-type: event` → its `:event-type` (`contentBlockDelta`, `chunk`, …);
 * - `:message-type: exception` → `exception:` and its `:exception-type` (`exception:throttlingException`);
 * - `:message-type: error` → `error:` and its `:error-code`, the payload `{"message": :error-message}`.
 * The same splitter feeds the canonical path's reader and the pass-through's.
 * The codec is AWS's libraries' (aws-sdk.ts), which the caller has awaited.
 */
import type { EventStreamCodec } from '@smithy/eventstream-codec';
import type { EventSplitter, SseEvent, SseEventHandler } from '../../lib/sse-decoder.js';
import { UnreadableStreamError } from '../shared/stream-translator.js';
import type { AwsSdk } from './aws-sdk.js';

type Message = ReturnType<EventStreamCodec['decode']>;
type MessageHeaders = Message['headers'];

/** A message's prelude: total length, headers length, their checksum. */
const PRELUDE_BYTES = 12;
/** AWS's own limit for one event-stream message is 16 MiB; nothing longer is read. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** The event name of a message and its payload's text (see the file comment). */
export function eventOfMessage(message: Message, toUtf8: AwsSdk['toUtf8']): SseEvent {
  const headers = message.headers;
  const kind = stringHeader(headers, ':message-type');
  const body = toUtf8(message.body);
  if (kind === 'event') return { event: stringHeader(headers, ':event-type') ?? '', data: body };
  if (kind === 'exception') return { event: `exception:${stringHeader(headers, ':exception-type') ?? ''}`, data: body };
  if (kind === 'error') return { event: `error:${stringHeader(headers, ':error-code') ?? ''}`, data: JSON.stringify({ message: stringHeader(headers, ':error-message') ?? '' }) };
  throw new UnreadableStreamError(`The upstream sent an event-stream message of an unknown type (${String(kind)}).`);
}

function stringHeader(headers: MessageHeaders, name: string): string | undefined {
  const header = headers[name];
  return header?.type === 'string' ? header.value : undefined;
}

export class EventStreamSplitter implements EventSplitter {
  readonly #codec: EventStreamCodec;
  readonly #toUtf8: AwsSdk['toUtf8'];
  /** The bytes of a message not yet whole (an exact-size copy, so no chunk is kept alive). */
  #carry: Buffer | undefined;

  constructor(sdk: AwsSdk) {
    this.#codec = new sdk.EventStreamCodec(sdk.toUtf8, sdk.fromUtf8);
    this.#toUtf8 = sdk.toUtf8;
  }

  push(chunk: Uint8Array, handler: SseEventHandler): void {
    let bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.#carry !== undefined) {
      bytes = Buffer.concat([this.#carry, bytes]);
      this.#carry = undefined;
    }
    let offset = 0;
    while (bytes.length - offset >= PRELUDE_BYTES) {
      const length = bytes.readUInt32BE(offset);
      if (length < PRELUDE_BYTES + 4 || length > MAX_MESSAGE_BYTES) throw new UnreadableStreamError(`The upstream sent an event-stream message of ${length} bytes, outside the format's bounds.`);
      if (bytes.length - offset < length) break;
      const { event, data } = this.#decode(bytes.subarray(offset, offset + length));
      offset += length;
      handler.sseEvent(event, data, '');
    }
    if (offset < bytes.length) this.#carry = Buffer.from(bytes.subarray(offset));
  }

  end(): void {
    this.#carry = undefined;
  }

  #decode(bytes: Uint8Array): SseEvent {
    let message: Message;
    try {
      message = this.#codec.decode(bytes);
    } catch (error) {
      // A checksum that does not match, headers that do not parse: the stream is not to be trusted.
      throw new UnreadableStreamError(`The upstream sent an unreadable event-stream message (${error instanceof Error ? error.message : 'undecodable'}).`);
    }
    return eventOfMessage(message, this.#toUtf8);
  }
}
