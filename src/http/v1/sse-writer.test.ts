import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { SseWriter } from './sse-writer.js';

/** A real server on loopback whose one route hands its response to `serve`; `writes` records each write to the socket. */
async function serverWith(serve: (writer: SseWriter, response: ServerResponse, writes: string[]) => Promise<void> | void): Promise<{ url: string; server: Server; firstWrites: () => number }> {
  let firstWrites = 0;
  const server = createServer((_request, response) => {
    const writes: string[] = [];
    const write = response.write.bind(response) as (chunk: string) => boolean;
    response.write = ((chunk: string) => {
      writes.push(chunk);
      return write(chunk);
    }) as typeof response.write;
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    void serve(new SseWriter(response, () => (firstWrites += 1)), response, writes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server, firstWrites: () => firstWrites };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** Opens the route and resolves with the response, not yet read. */
function open(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => httpRequest(url, resolve).on('error', reject).end());
}

async function readAll(response: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of response) text += (chunk as Buffer).toString('utf8');
  return text;
}

describe('SseWriter', () => {
  it('sends the frames of one event-loop turn in one write, and the last ones with the end', async () => {
    let writesSeen: string[] = [];
    const { url, firstWrites } = await serverWith(async (writer, _response, writes) => {
      writesSeen = writes;
      writer.write('data: 1\n\n');
      writer.write('data: 2\n\n');
      writer.write('');
      writer.write('data: 3\n\n');
      await nextTurn();
      await nextTurn();
      writer.write('data: 4\n\n');
      writer.end('data: [DONE]\n\n');
    });
    const text = await readAll(await open(url));
    expect(text).toBe('data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\ndata: [DONE]\n\n');
    // One write for the first turn; the fourth frame leaves with the end.
    expect(writesSeen).toEqual(['data: 1\n\ndata: 2\n\ndata: 3\n\n']);
    expect(firstWrites()).toBe(1);
  });

  it('makes the producer wait while the client does not read, and lets it go on once it does', async () => {
    const frame = `data: ${'x'.repeat(16 * 1024)}\n\n`;
    let framesBeforeWaiting = 0;
    let waited: Promise<void> | undefined;
    const { url } = await serverWith(async (writer) => {
      for (;;) {
        writer.write(frame);
        await nextTurn();
        waited = writer.ready();
        if (waited !== undefined) break;
        framesBeforeWaiting += 1;
        if (framesBeforeWaiting > 10_000) throw new Error('the socket never pushed back');
      }
      await waited;
      writer.end('data: [DONE]\n\n');
    });
    const response = await open(url);
    response.pause();
    await expect.poll(() => waited !== undefined, { timeout: 10_000 }).toBe(true);
    // Bounded: the producer stopped after what the socket buffers hold, not after everything.
    expect(framesBeforeWaiting).toBeLessThan(10_000);
    const text = await readAll(response);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text.length).toBe((framesBeforeWaiting + 1) * frame.length + 'data: [DONE]\n\n'.length);
  });

  it('lets a waiting producer go on when the client goes away, and writes nothing more', async () => {
    const frame = `data: ${'y'.repeat(16 * 1024)}\n\n`;
    let released = false;
    let openAfter = true;
    const { url } = await serverWith(async (writer) => {
      let waiting: Promise<void> | undefined;
      while (waiting === undefined) {
        writer.write(frame);
        await nextTurn();
        waiting = writer.ready();
      }
      await waiting;
      released = true;
      openAfter = writer.open;
      writer.write(frame);
      writer.end('data: [DONE]\n\n');
    });
    const response = await open(url);
    response.pause();
    await new Promise((resolve) => setTimeout(resolve, 100));
    response.destroy();
    await expect.poll(() => released, { timeout: 10_000 }).toBe(true);
    expect(openAfter).toBe(false);
  });

  it('sends the head with the first frames, in one write, also when they come later', async () => {
    const { url } = await serverWith(async (writer) => {
      // Long enough for a head sent on its own to reach the client alone.
      await new Promise((resolve) => setTimeout(resolve, 50));
      writer.write('data: 1\n\n');
      await nextTurn();
      writer.end('data: [DONE]\n\n');
    });
    const { port } = new URL(url);
    const first = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n'));
      socket.once('data', (chunk: Buffer) => {
        resolve(chunk.toString('latin1'));
        socket.destroy();
      });
      socket.on('error', reject);
    });
    // The first bytes the client receives are the head and the first frame, together.
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n[0-9a-f]+\r\ndata: 1\n\n\r\n/);
  });

  it('sends the head when the answer ends without a frame', async () => {
    const { url } = await serverWith((writer) => writer.end());
    const response = await open(url);
    expect(response.statusCode).toBe(200);
    expect(await readAll(response)).toBe('');
  });
});
