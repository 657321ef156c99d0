/**
 * `CanonicalEvents` from what is not a body read in one loop, and the other way round: the events of
 * a whole answer (an upstream that answered JSON to a stream request), a provider's async iterable
 * (the simulated provider's, which the router reads this way), and the async iterable a provider
 * that opens its answers in one loop gives as its `stream` (canonical-stream.ts).
 */
import type { CanonicalEvent } from '../../protocol/canonical.js';
import type { CanonicalEvents, EventSink } from '../provider.js';

/** Events known at once (a whole answer): handed over together when started, then closed. */
export class EventList implements CanonicalEvents {
  #events: readonly CanonicalEvent[] | undefined;

  constructor(events: readonly CanonicalEvent[]) {
    this.#events = events;
  }

  start(sink: EventSink): void {
    const events = this.#events;
    this.#events = undefined;
    if (events !== undefined && events.length > 0) sink.events(events);
    sink.closed();
  }

  pause(): void {}

  resume(): void {}

  release(): void {
    this.#events = undefined;
  }
}

/**
 * The rest of an async iterator of events, read one event at a time (a provider whose answer is an
 * async iterable). An iterator that throws, or ends without `finish` or `error`, is closed without
 * an end, which the reader of the events takes for an answer broken off.
 */
export class IteratedEvents implements CanonicalEvents {
  readonly #iterator: AsyncIterator<CanonicalEvent>;
  /** Set while paused: resolved by `resume`. */
  #paused: Promise<void> | undefined;
  #resume: (() => void) | undefined;
  #started = false;
  #released = false;

  constructor(iterator: AsyncIterator<CanonicalEvent>) {
    this.#iterator = iterator;
  }

  start(sink: EventSink): void {
    this.#started = true;
    void this.#pump(sink);
  }

  pause(): void {
    this.#paused ??= new Promise((resolve) => (this.#resume = resolve));
  }

  resume(): void {
    const resume = this.#resume;
    this.#paused = undefined;
    this.#resume = undefined;
    resume?.();
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.resume();
    // Started, the pump returns the iterator once its pending step is over (never during one).
    if (!this.#started) void this.#return();
  }

  async #pump(sink: EventSink): Promise<void> {
    try {
      for (;;) {
        if (this.#paused !== undefined) await this.#paused;
        if (this.#released) break;
        const next = await this.#iterator.next();
        if (next.done === true || this.#released) break;
        sink.events([next.value]);
      }
    } catch {
      // A provider that threw mid-answer: closed without an end, which says so.
    }
    if (this.#released) await this.#return();
    sink.closed();
  }

  async #return(): Promise<void> {
    await this.#iterator.return?.().catch(() => undefined);
  }
}

/**
 * The async iterable of an answer opened in one loop (a provider's `stream`): `response-start` once
 * `open` resolved, then the events as they come, read no faster than they are taken. Leaving the
 * iteration early releases the events, which stops the upstream call.
 */
export async function* iterateEvents(open: () => Promise<CanonicalEvents>, upstreamModel: string): AsyncGenerator<CanonicalEvent> {
  const events = await open();
  const queue: CanonicalEvent[] = [];
  let closed = false;
  let wake: (() => void) | undefined;
  const woken = (): void => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  try {
    yield { type: 'response-start', upstreamModel };
    events.start({
      events(list) {
        queue.push(...list);
        events.pause();
        woken();
      },
      closed() {
        closed = true;
        woken();
      },
    });
    for (;;) {
      for (let event = queue.shift(); event !== undefined; event = queue.shift()) yield event;
      if (closed) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        events.resume();
      });
    }
  } finally {
    if (!closed) events.release();
  }
}
