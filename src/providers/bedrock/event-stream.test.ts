/**
 * The event-stream splitter (event-stream.ts) on messages framed by AWS's own codec: whole messages
 * in one chunk or cut anywhere across chunks, each kind of message named as the translators read
 * it, and every bad input refused: a corrupted checksum, a length outside the format's bounds, a
 * message type that does not exist. What is left unfinished when the body ends is dropped.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { describe, expect, it } from 'vitest';
import { splitEvents, type SseEvent } from '../../lib/sse-decoder.js';
import { eventMessage, exceptionMessage } from '../../../test/support/bedrock-upstream.js';
import { UnreadableStreamError } from '../shared/stream-translator.js';
import { awsSdk } from './aws-sdk.js';
import { EventStreamSplitter } from './event-stream.js';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const sdk = await awsSdk();

function split(chunks: Uint8Array[]): SseEvent[] {
  const splitter = new EventStreamSplitter(sdk);
  const events: SseEvent[] = [];
  for (const chunk of chunks) splitter.push(chunk, { sseEvent: (event, data) => void events.push({ event, data }) });
  splitter.end();
  return events;
}

const delta = eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } });
const stop = eventMessage('messageStop', { stopReason: 'end_turn' });

describe('the event-stream splitter', () => {
  it('names events by their :event-type and hands over their JSON payload', () => {
    const events = split([Buffer.concat([delta, stop])]);
    expect(events.map((event) => event.event)).toEqual(['contentBlockDelta', 'messageStop']);
    expect(JSON.parse(events[0]!.data)).toMatchObject({ contentBlockIndex: 0, delta: { text: 'Hello' } });
  });

  it('reads messages cut at every byte across chunks the same', () => {
    const whole = Buffer.concat([delta, stop]);
    for (let cut = 1; cut < whole.length; cut += 1) {
      expect(split([whole.subarray(0, cut), whole.subarray(cut)]).map((event) => event.event)).toEqual(['contentBlockDelta', 'messageStop']);
    }
    expect(split([...whole].map((byte) => Uint8Array.of(byte))).map((event) => event.event)).toEqual(['contentBlockDelta', 'messageStop']);
  });

  it('names exception and error messages apart from events', () => {
    const error = codec.encode({
      headers: { ':message-type': { type: 'string', value: 'error' }, ':error-code': { type: 'string', value: 'InternalFailure' }, ':error-message': { type: 'string', value: 'It broke.' } },
      body: new Uint8Array(0),
    });
    const events = split([exceptionMessage('throttlingException', 'Slow down.'), error]);
    expect(events).toEqual([
      { event: 'exception:throttlingException', data: '{"message":"Slow down."}' },
      { event: 'error:InternalFailure', data: '{"message":"It broke."}' },
    ]);
  });

  it('refuses a message whose checksum does not match', () => {
    const corrupted = Buffer.from(delta);
    corrupted.writeUInt8(corrupted.readUInt8(corrupted.length - 6) ^ 0xff, corrupted.length - 6);
    expect(() => split([corrupted])).toThrow(UnreadableStreamError);
    const badPrelude = Buffer.from(delta);
    badPrelude.writeUInt8(badPrelude.readUInt8(9) ^ 0xff, 9);
    expect(() => split([badPrelude])).toThrow('unreadable event-stream message');
  });

  it('refuses a length outside the format’s bounds before reading on', () => {
    const tooShort = Buffer.alloc(16);
    tooShort.writeUInt32BE(8, 0);
    expect(() => split([tooShort])).toThrow('outside the format');
    const tooLong = Buffer.alloc(12);
    tooLong.writeUInt32BE(17 * 1024 * 1024, 0);
    expect(() => split([tooLong])).toThrow('outside the format');
    // SSE text read as a prelude names a length past the bound.
    expect(() => split([Buffer.from('data: {"hello": "world"}\n\n')])).toThrow(UnreadableStreamError);
  });

  it('refuses a message type that does not exist', () => {
    const odd = codec.encode({ headers: { ':message-type': { type: 'string', value: 'gossip' } }, body: fromUtf8('{}') });
    expect(() => split([odd])).toThrow('unknown type (gossip)');
  });

  it('drops an unfinished message when the body ends, and decodes a body as an async iterable', async () => {
    expect(split([Buffer.concat([delta, stop.subarray(0, 20)])]).map((event) => event.event)).toEqual(['contentBlockDelta']);
    async function* body() {
      yield delta.subarray(0, 7);
      yield Buffer.concat([delta.subarray(7), stop]);
    }
    const events: SseEvent[] = [];
    for await (const event of splitEvents(new EventStreamSplitter(sdk), body())) events.push(event);
    expect(events.map((event) => event.event)).toEqual(['contentBlockDelta', 'messageStop']);
  });
});
