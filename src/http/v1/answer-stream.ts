/**
 * Delivers a streamed answer through the one SSE writer, on both kinds of route: a pass-through's
 * frames go out as the upstream framed them; canonical events go through the surface's encoder.
 * Either way the answer ends through the lifecycle's `conclude` (the bill settled, and a kept
 * response saved, before the frame that ends the stream), and a failure after the first frame is a
 * `GatewayError` from the catalogue told in the client's protocol by the surface's failure frame,
 * the same on both kinds of route (docs/wire-protocols.md §1.5, §2.5, §4.5).
 */
import type { FastifyReply } from 'fastify';
import type { UsageMeter } from '../../billing/usage-meter.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { CanonicalEvent } from '../../protocol/canonical.js';
import type { EventSink, FrameSink, PassthroughFailure, PassthroughFrame, PassthroughFrames } from '../../providers/provider.js';
import type { OpenedAnswer } from '../../routing/router.js';
import type { AnswerLifecycle } from './answer-lifecycle.js';
import { openEventStream, type SseWriter } from './sse-writer.js';
import type { ClientEncoder, PassthroughEnding } from './surfaces/surface.js';

/** What an answer is delivered with, streamed or not. */
export interface DeliveryParts {
  /** The surface's encoder, for a translated route (a pass-through needs none). */
  createEncoder: () => ClientEncoder;
  /** How the surface ends a pass-through's answer. */
  adapter: PassthroughEnding;
}

/** What one streamed answer is delivered with. */
export interface StreamParts extends DeliveryParts {
  lifecycle: AnswerLifecycle;
  meter: UsageMeter;
}

/** The usual mid-stream failure: the upstream broke off (its message says how, redacted). */
export function upstreamFailure(message: string): GatewayError {
  return new GatewayError('upstream_error', { message });
}

/** What a provider that threw mid-stream (rather than ending with an error event) is told as. */
const THROWN_MID_STREAM = 'The upstream provider failed mid-stream.';
/** What a pass-through's failure frame is told when the gateway itself failed on a frame. */
const INTERNAL_FAILURE = 'The gateway failed while relaying the answer.';

/**
 * Writes the answer to the socket itself (the reply is hijacked: Fastify sends nothing more) and
 * resolves once the stream is over. Never rejects: once the status line is out, every failure is
 * a frame. Not an async function: a stream waits in its relay, not in a suspended frame here.
 */
export function deliverStream(reply: FastifyReply, opened: OpenedAnswer<true>, parts: StreamParts): Promise<void> {
  const lifecycle = parts.lifecycle;
  const writer = openEventStream(reply, () => lifecycle.firstByte());
  const streamClosed = lifecycle.streamOpened();
  const finished = (ended: boolean): void => {
    // Cut short (client gone, or a failure): stop the upstream; the handler settles.
    if (!ended) {
      lifecycle.abort();
      writer.end();
    }
    streamClosed();
  };
  const delivered =
    opened.kind === 'passthrough'
      ? new PassthroughRelay(opened.result.frames, writer, { lifecycle, meter: parts.meter, adapter: parts.adapter }).run()
      : new EventRelay(opened, writer, parts).run();
  return delivered.then(finished, (error: unknown) => {
    lifecycle.fault('delivery', error);
    finished(false);
  });
}

/** What a pass-through's delivery keeps while its stream runs. */
type RelayParts = Pick<StreamParts, 'lifecycle' | 'meter' | 'adapter'>;

/**
 * A pass-through's frames, as they are: the sink its reader hands them to, from the upstream body's
 * own `data` events (one loop per stream, no promise per frame). The bill is settled before the
 * frame that ends the answer goes out; while it is, and while the client's socket is full, the
 * upstream is not read. After that frame the rest of the upstream's body is still read (and
 * dropped), so that its connection can be used again. `run` resolves once the body is over, with
 * whether the stream was ended in its protocol.
 */
class PassthroughRelay implements FrameSink {
  readonly #frames: PassthroughFrames;
  readonly #writer: SseWriter;
  readonly #parts: RelayParts;
  readonly #done: Promise<boolean>;
  #resolve: (ended: boolean) => void = () => undefined;
  /** Set by the frame that ends the answer: its settlement, then its write; true once written. */
  #ending: Promise<boolean> | undefined;
  /** Waiting for the client's socket to drain (the upstream is paused meanwhile). */
  #draining = false;

  constructor(frames: PassthroughFrames, writer: SseWriter, parts: RelayParts) {
    this.#frames = frames;
    this.#writer = writer;
    this.#parts = parts;
    this.#done = new Promise((resolve) => (this.#resolve = resolve));
  }

  run(): Promise<boolean> {
    this.#frames.start(this);
    return this.#done;
  }

  /**
   * Called from the upstream body's `data` events: what it throws would escape the request (an
   * uncaught exception ends the process and every stream in it), so a throw here, a gateway bug,
   * ends this answer alone, with the catalogue's internal error.
   */
  frame(frame: PassthroughFrame): void {
    try {
      this.#frame(frame);
    } catch (error) {
      this.#fault(error);
    }
  }

  #frame(frame: PassthroughFrame): void {
    const { lifecycle, meter } = this.#parts;
    for (const event of frame.events) meter.observe(event);
    if (frame.failure?.inBand === true) meter.refusedInBand();
    if (lifecycle.aborted) {
      // The client is gone: stop the upstream; the handler settles on what was metered.
      this.#frames.release();
      this.#resolve(false);
    } else if (frame.failure !== undefined) {
      this.#end(endWithPassthroughFailure(this.#writer, this.#parts, upstreamFailure(frame.failure.message), frame.failure));
    } else if (frame.last === true) {
      this.#end(this.#endWith(frame));
    } else {
      this.#writer.write(frame.sse);
      if (!this.#draining) this.#waitForDrain();
    }
  }

  closed(): void {
    if (this.#ending === undefined && !this.#parts.lifecycle.aborted) {
      // Pass-through frames end with a frame that says so; this is a safety net.
      this.#end(endWithPassthroughFailure(this.#writer, this.#parts, upstreamFailure(THROWN_MID_STREAM), { message: THROWN_MID_STREAM }));
    }
    if (this.#ending === undefined) this.#resolve(false);
    else void this.#ending.then(this.#resolve);
  }

  /** The gateway failed on a frame: the upstream is stopped and the answer ends with an internal error. */
  #fault(error: unknown): void {
    const lifecycle = this.#parts.lifecycle;
    lifecycle.fault('delivery', error);
    this.#frames.release();
    if (this.#ending !== undefined) return;
    if (lifecycle.aborted) this.#resolve(false);
    else this.#end(endWithPassthroughFailure(this.#writer, this.#parts, new GatewayError('internal'), { message: INTERNAL_FAILURE }));
  }

  #waitForDrain(): void {
    const ready = this.#writer.ready();
    if (ready === undefined) return;
    this.#draining = true;
    this.#frames.pause();
    void ready.then(() => {
      this.#draining = false;
      this.#frames.resume();
    });
  }

  /** The frame that ends the answer: concluded (settled, its response kept) before it goes out. */
  async #endWith(frame: PassthroughFrame): Promise<true> {
    const lifecycle = this.#parts.lifecycle;
    this.#frames.pause();
    // A failure the upstream told in its own protocol (`response.failed`) goes out as it is.
    const failure = frame.events.find((event) => event.type === 'error');
    if (failure !== undefined) lifecycle.failed('upstream_error', failure.upstreamCode);
    return lifecycle.conclude(
      () => frame.finalResponse,
      () => {
        this.#writer.end(frame.sse);
        this.#frames.resume();
        return true as const;
      },
    );
  }

  /** Never rejects: `closed` resolves the delivery with it. */
  #end(ending: Promise<unknown>): void {
    this.#ending = ending
      .then(
        () => true,
        async () => {
          // Storing the response failed: the stream still ends in its protocol.
          if (this.#parts.lifecycle.aborted) return false;
          await endWithPassthroughFailure(this.#writer, this.#parts, upstreamFailure(THROWN_MID_STREAM), { message: THROWN_MID_STREAM });
          return true;
        },
      )
      .catch((error: unknown) => {
        // Even the failure could not be told: the stream is cut (the handler still settles).
        this.#parts.lifecycle.fault('delivery', error);
        return false;
      });
  }
}

async function endWithPassthroughFailure(writer: SseWriter, parts: RelayParts, error: GatewayError, failure: PassthroughFailure): Promise<void> {
  parts.lifecycle.failed(error.errorCode);
  const { sse, response } = parts.adapter.passthroughFailure(error, failure, await parts.meter.usage());
  await parts.lifecycle.conclude(
    () => response,
    () => writer.end(sse),
  );
}

/**
 * A translated answer: its canonical events through the surface's encoder, handed over by the
 * provider's reader from the upstream body's own `data` events (one loop per stream, no promise per
 * event), as a pass-through's frames are. The answer ends at `finish` or an `error` (or a body over
 * without either), concluded (settled, its response kept) before the frames that end it go out;
 * while the client's socket is full the upstream is not read. `run` resolves once the body is over,
 * with whether the stream was ended in its protocol.
 */
class EventRelay implements EventSink {
  readonly #opened: Extract<OpenedAnswer<true>, { kind: 'events' }>;
  readonly #writer: SseWriter;
  readonly #parts: StreamParts;
  readonly #encoder: ClientEncoder;
  readonly #done: Promise<boolean>;
  #resolve: (ended: boolean) => void = () => undefined;
  /** Set once the answer ended: its settlement, then its last frames; true once written. */
  #ending: Promise<boolean> | undefined;
  /** Waiting for the client's socket to drain (the upstream is paused meanwhile). */
  #draining = false;

  constructor(opened: Extract<OpenedAnswer<true>, { kind: 'events' }>, writer: SseWriter, parts: StreamParts) {
    this.#opened = opened;
    this.#writer = writer;
    this.#parts = parts;
    this.#encoder = parts.createEncoder();
    this.#done = new Promise((resolve) => (this.#resolve = resolve));
  }

  async run(): Promise<boolean> {
    const { meter } = this.#parts;
    const encoder = this.#encoder;
    const first = this.#opened.first;
    try {
      meter.observe(first);
      writeAll(this.#writer, encoder.start(encoder.startsWithInput === true ? await meter.inputBeforeAnswer() : undefined));
      writeAll(this.#writer, encoder.push(first));
    } catch (error) {
      this.#opened.rest.release();
      throw error;
    }
    this.#opened.rest.start(this);
    return this.#done;
  }

  /**
   * Called from the upstream body's `data` events: what it throws would escape the request (an
   * uncaught exception ends the process and every stream in it), so a throw here, a gateway bug,
   * ends this answer alone, with the catalogue's internal error.
   */
  events(events: readonly CanonicalEvent[]): void {
    try {
      this.#events(events);
    } catch (error) {
      this.#fault(error);
    }
  }

  #events(events: readonly CanonicalEvent[]): void {
    if (this.#ending !== undefined) return;
    const { lifecycle, meter } = this.#parts;
    let end: GatewayError | 'finish' | undefined;
    for (const event of events) {
      meter.observe(event);
      if (event.type === 'error') {
        end = upstreamFailure(event.message);
        break;
      }
      writeAll(this.#writer, this.#encoder.push(event));
      if (event.type === 'finish') {
        end = 'finish';
        break;
      }
    }
    if (lifecycle.aborted) {
      // The client is gone: stop the upstream; the handler settles on what was metered.
      this.#opened.rest.release();
      this.#resolve(false);
    } else if (end !== undefined) {
      // After a failure nothing more of the upstream is of use.
      if (end !== 'finish') this.#opened.rest.release();
      this.#end(this.#conclude(end === 'finish' ? undefined : end));
    } else if (!this.#draining) {
      this.#waitForDrain();
    }
  }

  closed(): void {
    // A body over without the answer's end (a provider that broke off): it ends as a failure.
    if (this.#ending === undefined && !this.#parts.lifecycle.aborted) this.#end(this.#conclude(upstreamFailure(THROWN_MID_STREAM)));
    if (this.#ending === undefined) this.#resolve(false);
    else void this.#ending.then(this.#resolve);
  }

  /** The gateway failed on an event: the upstream is stopped and the answer ends with an internal error. */
  #fault(error: unknown): void {
    const lifecycle = this.#parts.lifecycle;
    lifecycle.fault('delivery', error);
    this.#opened.rest.release();
    if (this.#ending !== undefined) return;
    if (lifecycle.aborted) this.#resolve(false);
    else this.#end(this.#conclude(new GatewayError('internal')));
  }

  #waitForDrain(): void {
    const ready = this.#writer.ready();
    if (ready === undefined) return;
    this.#draining = true;
    const rest = this.#opened.rest;
    rest.pause();
    void ready.then(() => {
      this.#draining = false;
      rest.resume();
    });
  }

  /** The answer's last frames, finished or failed, written once it is concluded. */
  async #conclude(failure: GatewayError | undefined): Promise<true> {
    const { lifecycle, meter } = this.#parts;
    const encoder = this.#encoder;
    const usage = await meter.usage();
    if (failure !== undefined) lifecycle.failed(failure.errorCode);
    const frames = failure === undefined ? encoder.finish(usage) : encoder.fail(failure, usage);
    // The response the last frame carries is kept before it leaves, so a client that reads it right
    // after the stream finds it.
    return lifecycle.conclude(
      () => encoder.body(usage),
      () => {
        this.#writer.end(frames.join(''));
        return true as const;
      },
    );
  }

  /** Never rejects: `closed` resolves the delivery with it. */
  #end(ending: Promise<true>): void {
    this.#ending = ending.catch((error: unknown) => {
      // The last frames could not be made or written: the stream is cut (the handler still settles).
      this.#parts.lifecycle.fault('delivery', error);
      return false;
    });
  }
}

function writeAll(writer: SseWriter, frames: readonly string[]): void {
  for (const frame of frames) writer.write(frame);
}
