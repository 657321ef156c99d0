/**
 * The one loop of a pass-through stream, driven by a real stream body: frames in order, the end
 * of the answer, garbage, release, and that nothing of a chunk is kept once its frames are out.
 */
import { PassThrough } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { FrameSink, PassthroughFrame } from '../provider.js';
import { failureFrame } from './passthrough-frames.js';
import { PassthroughReader, failureText, type PassthroughFramer } from './passthrough-reader.js';
import { UnreadableStreamError } from './stream-translator.js';
import type { UpstreamBody } from './upstream-http.js';

/** A framer of the simplest protocol: `[END]` ends the answer, `garbage` is garbage. */
class TestFramer implements PassthroughFramer {
  ended: unknown[] = [];

  frame(_event: string | undefined, data: string, text: string): PassthroughFrame {
    if (data === 'garbage') throw new UnreadableStreamError('garbage');
    return data === '[END]' ? { sse: text, events: [], last: true } : { sse: text, events: [{ type: 'text-delta', delta: data }] };
  }

  end(error: unknown): PassthroughFrame {
    this.ended.push(error);
    return failureFrame({ message: error === undefined ? 'cut short' : failureText(error) });
  }
}

interface Run {
  body: PassThrough;
  reader: PassthroughReader;
  framer: TestFramer;
  frames: PassthroughFrame[];
  closed: Promise<void>;
}

function run(sink: Partial<FrameSink> = {}): Run {
  const body = new PassThrough();
  const framer = new TestFramer();
  const reader = new PassthroughReader(body as unknown as UpstreamBody, framer);
  const frames: PassthroughFrame[] = [];
  const closed = new Promise<void>((resolve) =>
    reader.start({
      frame: (frame) => {
        frames.push(frame);
        sink.frame?.(frame);
      },
      closed: resolve,
    }),
  );
  return { body, reader, framer, frames, closed };
}

/**
 * Writes a chunk with memory of its own, from a function of its own (so that no test frame keeps
 * it), and returns a weak reference to that memory.
 */
function write(body: PassThrough, text: string): WeakRef<ArrayBufferLike> {
  const chunk = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  chunk.write(text);
  body.write(chunk);
  return new WeakRef(chunk.buffer);
}

describe('PassthroughReader', () => {
  it('hands each frame over as its chunk arrives, and reads past the last frame without handing more', async () => {
    const { body, framer, frames, closed } = run();
    body.write('data: one\n\ndata: t');
    await nextTurn();
    expect(frames.map((frame) => frame.sse)).toEqual(['data: one\n\n']);
    body.end('wo\n\ndata: [END]\n\ndata: after the end\n\n');
    await closed;
    expect(frames.map((frame) => frame.sse)).toEqual(['data: one\n\n', 'data: two\n\n', 'data: [END]\n\n']);
    expect(framer.ended).toEqual([]);
  });

  it('ends the answer with the framer when the body ends before the last frame', async () => {
    const { body, frames, closed } = run();
    body.end('data: one\n\n');
    await closed;
    expect(frames.at(-1)?.failure).toEqual({ message: 'cut short' });
  });

  it('ends the answer on garbage, and stops reading the body', async () => {
    const { body, frames, closed } = run();
    body.write('data: one\n\ndata: garbage\n\ndata: two\n\n');
    await closed;
    expect(frames.map((frame) => frame.sse)).toEqual(['data: one\n\n', '']);
    expect(frames.at(-1)?.failure).toEqual({ message: 'garbage' });
    expect(body.destroyed).toBe(true);
  });

  it('hands nothing more once released, and says when the body is over', async () => {
    const release = { reader: undefined as PassthroughReader | undefined };
    const started = run({ frame: () => release.reader?.release() });
    release.reader = started.reader;
    started.body.write('data: one\n\ndata: two\n\n');
    await started.closed;
    expect(started.frames.map((frame) => frame.sse)).toEqual(['data: one\n\n']);
    expect(started.body.destroyed).toBe(true);
  });

  it('can be released before it starts', async () => {
    const body = new PassThrough();
    new PassthroughReader(body as unknown as UpstreamBody, new TestFramer()).release();
    await nextTurn();
    expect(body.destroyed).toBe(true);
  });

  it('keeps no chunk once its frames are handed over', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const { body, frames, closed } = run();
    const written: WeakRef<ArrayBufferLike>[] = [];
    for (let index = 0; index < 50; index += 1) {
      // Each chunk ends inside an event, which a small one finishes: its rest is carried meanwhile.
      written.push(write(body, `data: ${'x'.repeat(1000)}${index}\n\ndata: par`));
      await nextTurn();
      if (index < 49) write(body, 't\n\n');
    }
    expect(frames).toHaveLength(99);
    // The frames go out and are dropped, as the writer drops them.
    frames.length = 0;
    await nextTurn();
    gc();
    expect(written.flatMap((ref, index) => (ref.deref() === undefined ? [] : [index]))).toEqual([]);
    body.end('t\n\n');
    await closed;
    expect(frames.map((frame) => frame.sse)).toEqual(['data: part\n\n', '']);
  });
});
