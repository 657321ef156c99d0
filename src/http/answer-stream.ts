/**
 * Delivers a streamed answer through the one SSE writer, on both kinds of route: a pass-through's
 * frames go out as the upstream framed them; canonical events go through the surface's encoder.
 * Either way the bill is settled (and a stored response saved) before the frame that ends the
 * stream, and a failure after the first frame is told in the client's protocol from the error
 * catalogue (stream-failures.ts), the same on both kinds of route.
 */
import type { FastifyReply } from 'fastify';
import type { UsageMeter } from '../billing/usage-meter.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { PassthroughFailure, PassthroughFrame } from '../providers/provider.js';
import type { OpenedAnswer } from '../routing/router.js';
import type { AnswerLifecycle } from './answer-lifecycle.js';
import { SseWriter } from './sse-writer.js';
import type { KeepResponse } from './stored-responses.js';
import { upstreamFailure } from './stream-failures.js';
import type { ClientEncoder, SurfaceAdapter } from './surfaces.js';

/** What an answer is delivered with, streamed or not. */
export interface DeliveryParts {
  /** The surface's encoder, for a translated route (a pass-through needs none). */
  createEncoder: () => ClientEncoder;
  /** Saves the final response object; absent unless the request is stored. */
  keep: KeepResponse | undefined;
}

/** What one streamed answer is delivered with. */
export interface StreamParts extends DeliveryParts {
  lifecycle: AnswerLifecycle;
  meter: UsageMeter;
  adapter: SurfaceAdapter;
}

/** What a provider that threw mid-stream (rather than ending with an error event) is told as. */
const THROWN_MID_STREAM = 'The upstream provider failed mid-stream.';

/**
 * Writes the answer to the socket itself (the reply is hijacked: Fastify sends nothing more) and
 * resolves once the stream is over. Never rejects: once the status line is out, every failure is
 * a frame.
 */
export async function deliverStream(reply: FastifyReply, opened: OpenedAnswer<true>, parts: StreamParts): Promise<void> {
  reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache');
  reply.hijack();
  const response = reply.raw;
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
  response.writeHead(200);
  const writer = new SseWriter(response, () => parts.lifecycle.firstByte());
  const streamClosed = parts.lifecycle.streamOpened();
  let ended = false;
  try {
    ended = opened.kind === 'passthrough' ? await relayFrames(opened.result.frames, writer, parts) : await encodeEvents(opened, writer, parts);
  } catch (error) {
    reply.log.error({ err: error }, 'delivering the stream failed');
  } finally {
    // Cut short (client gone, or a failure above): stop the upstream; the handler settles.
    if (!ended) {
      parts.lifecycle.abort();
      writer.end();
    }
    streamClosed();
  }
}

/**
 * A pass-through's frames, as they are. Returns whether the stream was ended in its protocol.
 * After the last frame the rest of the upstream's body is still read (and dropped), so that its
 * connection can be used again.
 */
async function relayFrames(frames: AsyncIterable<PassthroughFrame>, writer: SseWriter, parts: StreamParts): Promise<boolean> {
  const { lifecycle, meter, keep } = parts;
  let ended = false;
  try {
    for await (const frame of frames) {
      if (ended) continue;
      for (const event of frame.events) meter.observe(event);
      if (lifecycle.aborted) return false;
      if (frame.failure !== undefined) {
        await endWithPassthroughFailure(writer, parts, upstreamFailure(frame.failure.message), frame.failure);
        ended = true;
      } else if (frame.last === true) {
        // A failure the upstream told in its own protocol (`response.failed`) goes out as it is.
        if (frame.events.some((event) => event.type === 'error')) lifecycle.failed('upstream_error');
        await Promise.all([lifecycle.settle(), frame.finalResponse === undefined ? undefined : keep?.(frame.finalResponse)]);
        writer.end(frame.sse);
        ended = true;
      } else {
        writer.write(frame.sse);
        await writer.ready();
      }
    }
  } catch {
    // Pass-through frames end with a failure frame rather than throwing; this is a safety net.
  }
  if (ended || lifecycle.aborted) return ended;
  await endWithPassthroughFailure(writer, parts, upstreamFailure(THROWN_MID_STREAM), { message: THROWN_MID_STREAM });
  return true;
}

async function endWithPassthroughFailure(writer: SseWriter, parts: StreamParts, error: GatewayError, failure: PassthroughFailure): Promise<void> {
  parts.lifecycle.failed(error.errorCode);
  const { sse, response } = parts.adapter.passthroughFailure(error, failure, parts.meter.usage());
  await Promise.all([parts.lifecycle.settle(), response === undefined ? undefined : parts.keep?.(response)]);
  writer.end(sse);
}

/** Canonical events through the surface's encoder. Returns whether the stream was ended in its protocol. */
async function encodeEvents(opened: Extract<OpenedAnswer<true>, { kind: 'events' }>, writer: SseWriter, parts: StreamParts): Promise<boolean> {
  const { lifecycle, meter } = parts;
  const encoder = parts.createEncoder();
  let failure: GatewayError | undefined;
  try {
    writeAll(writer, encoder.start());
    meter.observe(opened.first);
    writeAll(writer, encoder.push(opened.first));
    for await (const event of iterate(opened.rest)) {
      meter.observe(event);
      if (event.type === 'error') {
        failure = upstreamFailure(event.message);
        break;
      }
      writeAll(writer, encoder.push(event));
      await writer.ready();
      if (lifecycle.aborted) break;
    }
  } catch {
    // A provider that throws mid-stream (rather than yielding an error event) still ends the
    // stream in the client's protocol.
    failure = upstreamFailure(THROWN_MID_STREAM);
  }
  if (lifecycle.aborted) return false;
  const usage = meter.usage();
  if (failure !== undefined) lifecycle.failed(failure.errorCode);
  const frames = failure === undefined ? encoder.finish(usage) : encoder.fail(failure, usage);
  // The response the last frame carries is stored before it leaves, so a client that reads it
  // right after the stream finds it.
  await Promise.all([lifecycle.settle(), parts.keep?.(encoder.body(usage))]);
  writer.end(frames.join(''));
  return true;
}

function writeAll(writer: SseWriter, frames: readonly string[]): void {
  for (const frame of frames) writer.write(frame);
}

/** An iterator as an iterable, for `for await` (the router hands the rest of an answer over as an iterator). */
export function iterate<T>(iterator: AsyncIterator<T>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => iterator };
}
