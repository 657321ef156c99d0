/**
 * A turn's backpressure, through the real parts: a Fastify app whose `/v1/responses` writes with the
 * SSE writer (openEventStream) as fast as `ready()` lets it, run by a SocketTurn whose socket
 * reports a full buffer until the test lets it drain. The producer must stop after a bounded number
 * of frames, then finish once the socket takes more, with every frame delivered once, in order.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { openEventStream } from '../../../sse-writer.js';
import { errorEvent, SocketTurn, type TurnSink } from './socket-turn.js';

const FRAMES = 2_000;
const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

/** An app whose answer is FRAMES events of 1 KiB, written while the writer takes them. */
async function producingApp(progress: { written: number }): Promise<FastifyInstance> {
  const app = Fastify();
  apps.push(app);
  app.post('/v1/responses', async (_request, reply) => {
    const writer = openEventStream(reply, () => undefined);
    for (let index = 0; index < FRAMES; index += 1) {
      writer.write(`event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', index, delta: 'x'.repeat(1024) })}\n\n`);
      progress.written = index + 1;
      await nextTurn();
      await writer.ready();
    }
    writer.end(`event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [] } })}\n\n`);
  });
  await app.ready();
  return app;
}

/** A socket whose buffer reads as full until `drain()`. */
function stuckSocket(): { sink: TurnSink; received: unknown[]; drain: () => void } {
  let full = true;
  const received: unknown[] = [];
  const waiting: Array<() => void> = [];
  const sink: TurnSink = {
    send(text, sent) {
      received.push(JSON.parse(text));
      if (full) waiting.push(sent);
      else sent();
    },
    get buffered() {
      return full ? 64 * 1024 * 1024 : 0;
    },
    batch: (sends) => sends(),
  };
  const drain = (): void => {
    full = false;
    for (const sent of waiting.splice(0)) sent();
  };
  return { sink, received, drain };
}

describe('SocketTurn', () => {
  it('stops the answer while the socket is full, and delivers all of it once the socket drains', async () => {
    const progress = { written: 0 };
    const app = await producingApp(progress);
    const socket = stuckSocket();
    const turn = new SocketTurn(app, { headers: {}, remoteAddress: '127.0.0.1', body: { model: 'm' } }, socket.sink);
    await expect.poll(() => progress.written, { timeout: 5_000 }).toBeGreaterThan(0);
    // Give the producer time to run ahead if nothing held it back.
    for (let turnCount = 0; turnCount < FRAMES; turnCount += 1) await nextTurn();
    const heldAt = progress.written;
    // About 16 KiB waiting in the turn's stream; unheld, it would have written every frame by now.
    expect(heldAt).toBeLessThan(100);
    socket.drain();
    const end = await turn.done;
    expect(progress.written).toBe(FRAMES);
    const deltas = socket.received.filter((event) => (event as { type: string }).type === 'response.output_text.delta');
    expect(deltas.map((event) => (event as { index: number }).index)).toEqual(Array.from({ length: FRAMES }, (_, index) => index));
    expect(end.response).toMatchObject({ id: 'resp_1', status: 'completed' });
  });

  it('tells an HTTP error answer as one error event with its status', async () => {
    const app = Fastify();
    apps.push(app);
    app.post('/v1/responses', async (_request, reply) => reply.code(429).send({ error: { message: 'Rate limit exceeded.', type: 'service_api_error', code: '' } }));
    await app.ready();
    const received: string[] = [];
    const turn = new SocketTurn(app, { headers: {}, remoteAddress: '127.0.0.1', body: {} }, { send: (text, sent) => (received.push(text), sent()), buffered: 0, batch: (sends) => sends() });
    await turn.done;
    expect(received).toEqual([errorEvent(429, JSON.stringify({ error: { message: 'Rate limit exceeded.', type: 'service_api_error', code: '' } }))]);
    expect(JSON.parse(received[0]!)).toMatchObject({ type: 'error', status: 429, error: { message: 'Rate limit exceeded.' } });
  });
});
