/**
 * The one loop of a translated answer, driven by a real stream body: events in order as their
 * chunks arrive, the end of the answer (`finish`, an in-band failure, garbage, a cut body, a body
 * whole without its last event), release, and the adapters between the loop and async iterables.
 */
import { PassThrough } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import type { EventSink } from '../provider.js';
import { EventList, IteratedEvents, iterateEvents } from './canonical-events.js';
import { CanonicalReader, CUT_SHORT } from './canonical-reader.js';
import { UnreadableStreamError, type StreamTranslator } from './stream-translator.js';
import type { UpstreamBody } from './upstream-http.js';

/**
 * A translator of the simplest wire: each event's data is text, `[END]` ends the answer, `failed`
 * is an in-band failure naming the upstream's key, `garbage` is garbage; after `half` the answer is
 * whole even if the body ends without `[END]`.
 */
class TestTranslator implements StreamTranslator {
  complete = false;
  #half = false;

  translate({ data }: { data: string }): CanonicalEvent[] {
    if (data === 'garbage') throw new UnreadableStreamError('garbage');
    if (data === 'failed') return [{ type: 'text-delta', delta: 'before' }, { type: 'error', code: 'upstream_error', message: 'refused sk-secret' }, { type: 'text-delta', delta: 'after' }];
    if (data === '[END]') {
      this.complete = true;
      return [{ type: 'finish', reason: 'stop' }];
    }
    if (data === 'half') this.#half = true;
    return [{ type: 'text-delta', delta: data }];
  }

  endOfBody(): CanonicalEvent[] | undefined {
    return this.#half ? [{ type: 'finish', reason: 'length' }] : undefined;
  }
}

const client = { safeText: (text: string) => text.replace('sk-secret', '[redacted]') };

interface Run {
  body: PassThrough;
  reader: CanonicalReader;
  lists: CanonicalEvent[][];
  closed: Promise<void>;
}

function run(sink: Partial<EventSink> = {}): Run {
  const body = new PassThrough();
  const reader = new CanonicalReader(body as unknown as UpstreamBody, new TestTranslator(), client);
  const lists: CanonicalEvent[][] = [];
  const closed = new Promise<void>((resolve) =>
    reader.start({
      events: (events) => {
        lists.push([...events]);
        sink.events?.(events);
      },
      closed: resolve,
    }),
  );
  return { body, reader, lists, closed };
}

const text = (delta: string): CanonicalEvent => ({ type: 'text-delta', delta });

describe('CanonicalReader', () => {
  it("hands each event's canonical events over as its chunk arrives, and reads past the end without handing more", async () => {
    const { body, lists, closed } = run();
    body.write('data: one\n\ndata: t');
    await nextTurn();
    expect(lists).toEqual([[text('one')]]);
    body.end('wo\n\ndata: [END]\n\ndata: after the end\n\n');
    await closed;
    expect(lists).toEqual([[text('one')], [text('two')], [{ type: 'finish', reason: 'stop' }]]);
    // The tail is read to its end, so that the connection can be used again.
    expect(body.readableEnded).toBe(true);
  });

  it('ends at an in-band failure, its text redacted, and stops the upstream call', async () => {
    const { body, lists, closed } = run();
    body.write('data: one\n\ndata: failed\n\ndata: two\n\n');
    await closed;
    expect(lists).toEqual([[text('one')], [text('before'), { type: 'error', code: 'upstream_error', message: 'refused [redacted]' }]]);
    expect(body.destroyed).toBe(true);
  });

  it('ends on garbage with its message, and stops reading the body', async () => {
    const { body, lists, closed } = run();
    body.write('data: one\n\ndata: garbage\n\ndata: two\n\n');
    await closed;
    expect(lists).toEqual([[text('one')], [{ type: 'error', code: 'upstream_error', message: 'garbage' }]]);
    expect(body.destroyed).toBe(true);
  });

  it('ends a body cut short with an error, unless what came is whole', async () => {
    const cut = run();
    cut.body.end('data: one\n\n');
    await cut.closed;
    expect(cut.lists.at(-1)).toEqual([{ type: 'error', code: 'upstream_error', message: CUT_SHORT }]);

    const broken = run();
    broken.body.write('data: one\n\n');
    await nextTurn();
    broken.body.destroy(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    await broken.closed;
    expect(broken.lists.at(-1)).toEqual([{ type: 'error', code: 'upstream_error', message: 'The upstream connection was lost mid-stream.' }]);

    const whole = run();
    whole.body.end('data: half\n\n');
    await whole.closed;
    expect(whole.lists).toEqual([[text('half')], [{ type: 'finish', reason: 'length' }]]);
  });

  it('hands nothing more once released, and says when the body is over', async () => {
    const release = { reader: undefined as CanonicalReader | undefined };
    const started = run({ events: () => release.reader?.release() });
    release.reader = started.reader;
    started.body.write('data: one\n\ndata: two\n\n');
    await started.closed;
    expect(started.lists).toEqual([[text('one')]]);
    expect(started.body.destroyed).toBe(true);
  });

  it('reads nothing while paused', async () => {
    const { body, reader, lists, closed } = run({ events: () => reader.pause() });
    body.write('data: one\n\n');
    await nextTurn();
    body.write('data: two\n\n');
    await nextTurn();
    expect(lists).toEqual([[text('one')]]);
    reader.resume();
    await nextTurn();
    expect(lists).toEqual([[text('one')], [text('two')]]);
    body.end('data: [END]\n\n');
    reader.resume();
    await closed;
  });
});

/** An async generator of `events`, telling `returned` when it is left early. */
async function* generated(events: CanonicalEvent[], returned: { early: boolean }, failAt = -1): AsyncGenerator<CanonicalEvent> {
  let index = 0;
  try {
    for (const event of events) {
      if (index === failAt) throw new Error('the provider broke');
      index += 1;
      await nextTurn();
      yield event;
    }
  } finally {
    returned.early = index < events.length;
  }
}

function collected(events: EventList | IteratedEvents): Promise<CanonicalEvent[][]> {
  return new Promise((resolve) => {
    const lists: CanonicalEvent[][] = [];
    events.start({ events: (list) => void lists.push([...list]), closed: () => resolve(lists) });
  });
}

describe('the adapters', () => {
  it('an event list hands its events over at once, then closes', async () => {
    expect(await collected(new EventList([text('one'), { type: 'finish', reason: 'stop' }]))).toEqual([[text('one'), { type: 'finish', reason: 'stop' }]]);
  });

  it('an iterator is read one event at a time, paused, and returned once released', async () => {
    const returned = { early: false };
    const events = new IteratedEvents(generated([text('one'), text('two'), text('three')], returned));
    const lists: CanonicalEvent[][] = [];
    const closed = new Promise<void>((resolve) =>
      events.start({
        events: (list) => {
          lists.push([...list]);
          if (lists.length === 1) events.pause();
          if (lists.length === 2) events.release();
        },
        closed: resolve,
      }),
    );
    await nextTurn();
    await nextTurn();
    await nextTurn();
    expect(lists).toEqual([[text('one')]]);
    events.resume();
    await closed;
    expect(lists).toEqual([[text('one')], [text('two')]]);
    expect(returned.early).toBe(true);
  });

  it('an iterator that throws is closed without an end', async () => {
    const lists = await collected(new IteratedEvents(generated([text('one'), text('two')], { early: false }, 1)));
    expect(lists).toEqual([[text('one')]]);
  });

  it('events read in one loop are iterated after `response-start`, and leaving early releases them', async () => {
    const body = new PassThrough();
    const reader = new CanonicalReader(body as unknown as UpstreamBody, new TestTranslator(), client);
    const iterated: CanonicalEvent[] = [];
    body.write('data: one\n\ndata: two\n\n');
    for await (const event of iterateEvents(() => Promise.resolve(reader), 'upstream-model')) {
      iterated.push(event);
      if (iterated.length === 3) break;
    }
    expect(iterated).toEqual([{ type: 'response-start', upstreamModel: 'upstream-model' }, text('one'), text('two')]);
    await nextTurn();
    expect(body.destroyed).toBe(true);

    // Left right after `response-start`, before anything was read.
    const unread = new PassThrough();
    const opened = iterateEvents(() => Promise.resolve(new CanonicalReader(unread as unknown as UpstreamBody, new TestTranslator(), client)), 'upstream-model');
    expect((await opened.next()).value).toEqual({ type: 'response-start', upstreamModel: 'upstream-model' });
    await opened.return(undefined);
    expect(unread.destroyed).toBe(true);
  });
});
