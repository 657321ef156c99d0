import { describe, it, expect } from 'vitest';
import { decodeSse, SseDecodeError, SseSplitter, type SseEvent } from './sse-decoder.js';
import { sseFrameOfLines } from '../protocol/sse-frame.js';

async function* chunksOf(pieces: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) yield piece;
}

async function collect(pieces: Uint8Array[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of decodeSse(chunksOf(pieces))) events.push(event);
  return events;
}

const encoder = new TextEncoder();

// Every framing feature at once: LF, CRLF and bare CR line ends, comments, event names, multi-line
// data, a field without a space after the colon, and 2-, 3- and 4-byte UTF-8 characters.
const SAMPLE =
  ': keep-alive comment\n\n' +
  'data: {"text":"héllo"}\n\n' +
  'event: response.output_text.delta\r\ndata: {"delta":"日本語 🦀"}\r\n\r\n' +
  'data: first line\rdata: second line\r\r' +
  'id: 7\nretry: 1000\ndata:no-space\n\n' +
  ':another comment\r\n' +
  'event: error\ndata: {"message":"Ωmega"}\n\n' +
  'data: [DONE]\n\n';

const EXPECTED: SseEvent[] = [
  { event: undefined, data: '{"text":"héllo"}' },
  { event: 'response.output_text.delta', data: '{"delta":"日本語 🦀"}' },
  { event: undefined, data: 'first line\nsecond line' },
  { event: undefined, data: 'no-space' },
  { event: 'error', data: '{"message":"Ωmega"}' },
  { event: undefined, data: '[DONE]' },
];

describe('decodeSse', () => {
  it('decodes a sample delivered in one chunk', async () => {
    expect(await collect([encoder.encode(SAMPLE)])).toEqual(EXPECTED);
  });

  it('decodes the same events when the sample is split at every byte offset', async () => {
    const bytes = encoder.encode(SAMPLE);
    for (let offset = 0; offset <= bytes.length; offset += 1) {
      const events = await collect([bytes.slice(0, offset), bytes.slice(offset)]);
      expect(events, `split at byte ${offset}`).toEqual(EXPECTED);
    }
  });

  it('decodes the sample fed one byte at a time', async () => {
    const bytes = encoder.encode(SAMPLE);
    const pieces = Array.from(bytes, (byte) => Uint8Array.of(byte));
    expect(await collect(pieces)).toEqual(EXPECTED);
  });

  it('decodes the sample split at every pair of offsets into three chunks', async () => {
    // Three-way splits catch state carried across two boundaries (CR then LF in separate chunks).
    const bytes = encoder.encode('data: a\r\n\r\ndata: é🦀\r\r');
    for (let first = 0; first <= bytes.length; first += 1) {
      for (let second = first; second <= bytes.length; second += 1) {
        const events = await collect([bytes.slice(0, first), bytes.slice(first, second), bytes.slice(second)]);
        expect(events, `split at ${first}/${second}`).toEqual([
          { event: undefined, data: 'a' },
          { event: undefined, data: 'é🦀' },
        ]);
      }
    }
  });

  it('drops an event the body never finished', async () => {
    expect(await collect([encoder.encode('data: complete\n\ndata: cut off')])).toEqual([{ event: undefined, data: 'complete' }]);
    expect(await collect([encoder.encode('data: complete\n\ndata: no blank line\n')])).toEqual([{ event: undefined, data: 'complete' }]);
  });

  it('treats a CR at the very end of the body as a line end', async () => {
    expect(await collect([encoder.encode('data: last\r'), encoder.encode('\r')])).toEqual([{ event: undefined, data: 'last' }]);
  });

  it('strips a UTF-8 byte order mark at the start', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode('data: x\n\n')]);
    expect(await collect([bytes.slice(0, 2), bytes.slice(2)])).toEqual([{ event: undefined, data: 'x' }]);
  });

  it('yields nothing for an empty body or comments only', async () => {
    expect(await collect([])).toEqual([]);
    expect(await collect([encoder.encode(': ping\n\n: ping\n\n')])).toEqual([]);
  });

  it('throws SseDecodeError when an event outgrows the limit', async () => {
    const body = chunksOf([encoder.encode('data: ' + 'x'.repeat(100)), encoder.encode('y'.repeat(100))]);
    const run = async (): Promise<void> => {
      for await (const _event of decodeSse(body, { maxEventLength: 64 })) {
        // draining
      }
    };
    await expect(run()).rejects.toBeInstanceOf(SseDecodeError);
  });

  it('returns the body iterator when the consumer stops early', async () => {
    let returned = false;
    const body: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]() {
        let sent = 0;
        return {
          next: async () => {
            sent += 1;
            return { done: false, value: encoder.encode(`data: ${sent}\n\n`) };
          },
          return: async () => {
            returned = true;
            return { done: true, value: undefined };
          },
        };
      },
    };
    for await (const event of decodeSse(body)) {
      expect(event.data).toBe('1');
      break;
    }
    expect(returned).toBe(true);
  });
});

describe('SseSplitter', () => {
  function split(pieces: Array<string | Uint8Array>): Array<{ event: string | undefined; data: string; text: string }> {
    const splitter = new SseSplitter();
    const events: Array<{ event: string | undefined; data: string; text: string }> = [];
    const handler = { sseEvent: (event: string | undefined, data: string, text: string) => void events.push({ event, data, text }) };
    for (const piece of pieces) splitter.push(typeof piece === 'string' ? encoder.encode(piece) : piece, handler);
    splitter.end();
    return events;
  }

  it('gives each event as sseFrameOfLines writes it, the upstream text itself when it is written so', () => {
    const events = split([SAMPLE]);
    expect(events.map(({ event, data }) => ({ event, data }))).toEqual(EXPECTED);
    for (const { event, data, text } of events) expect(text).toBe(sseFrameOfLines(event, data));
    // Written as the gateway writes it: the very text of the upstream, multi-line data included.
    const plain = 'data: {"a":1}\n\nevent: delta\ndata: line one\ndata: line two\n\n';
    expect(split([plain]).map((event) => event.text).join('')).toBe(plain);
  });

  it('writes anew what the upstream framed otherwise: CRLF, comments, ids, a space missing, an event name after the data', () => {
    const cases: Array<[string, string]> = [
      ['data: x\r\n\r\n', 'data: x\n\n'],
      [': ping\ndata: x\n\n', 'data: x\n\n'],
      ['id: 7\ndata: x\n\n', 'data: x\n\n'],
      ['data:x\n\n', 'data: x\n\n'],
      ['data: x\nevent: e\n\n', 'event: e\ndata: x\n\n'],
      ['event:\ndata: x\n\n', 'data: x\n\n'],
    ];
    for (const [upstream, written] of cases) expect(split([upstream]).map((event) => event.text), upstream).toEqual([written]);
  });

  it('gives the same text for an event split across chunks at any byte', () => {
    const text = 'event: delta\ndata: é🦀\ndata: two\n\n';
    const bytes = encoder.encode(text);
    for (let offset = 0; offset <= bytes.length; offset += 1) {
      expect(split([bytes.slice(0, offset), bytes.slice(offset)]), `split at byte ${offset}`).toEqual([{ event: 'delta', data: 'é🦀\ntwo', text }]);
    }
  });
});
