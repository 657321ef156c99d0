/**
 * A real HTTP server on 127.0.0.1 that plays an upstream for provider tests, whatever its wire
 * format: it serves any path, records what it received and whether the connection closed before
 * its answer was finished, and answers with whatever the test gives it (typically a recorded wire
 * capture from a provider's `__fixtures__` folder). Test-only code.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the double saw it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  /** The body as received, byte for byte (UTF-8). */
  rawBody: string;
  /** Resolves when the TCP connection carrying the request closes. */
  connectionClosed: Promise<void>;
  /** Whether the double had finished its answer when the connection closed. */
  answerFinishedAtClose: () => boolean;
}

export type Answer = (request: ReceivedRequest, response: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface UpstreamDouble {
  /** Base address with the version segment, as in the catalog: `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  requests: ReceivedRequest[];
  /** Replaces the answer for the following requests. */
  answer(handler: Answer): void;
  close(): Promise<void>;
}

export async function startUpstreamDouble(initial: Answer): Promise<UpstreamDouble> {
  let handler = initial;
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer((raw, response) => {
    const chunks: Buffer[] = [];
    raw.on('data', (chunk: Buffer) => chunks.push(chunk));
    raw.on('end', () => {
      const socket = raw.socket;
      // Keep-alive sockets carry many requests, each of which watches the close.
      socket.setMaxListeners(0);
      const connectionClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      let finishedAtClose = false;
      socket.once('close', () => {
        finishedAtClose = response.writableFinished;
      });
      const text = Buffer.concat(chunks).toString('utf8');
      const request: ReceivedRequest = {
        method: raw.method ?? '',
        path: raw.url ?? '',
        headers: raw.headers,
        body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
        rawBody: text,
        connectionClosed,
        answerFinishedAtClose: () => finishedAtClose,
      };
      requests.push(request);
      void Promise.resolve(handler(request, response, raw)).catch((error: unknown) => {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    answer: (next) => {
      handler = next;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers with an SSE body, written in pieces of `pieceSize` bytes (0: all at once). */
export function sse(text: string, pieceSize = 0): Answer {
  return async (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const bytes = Buffer.from(text, 'utf8');
    if (pieceSize <= 0) {
      response.end(bytes);
      return;
    }
    for (let offset = 0; offset < bytes.length; offset += pieceSize) {
      response.write(bytes.subarray(offset, offset + pieceSize));
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
  };
}

/** Answers with a JSON body and the given status. */
export function json(status: number, text: string): Answer {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(text);
  };
}

/** Sends `head` as a 200 stream (SSE unless `contentType` says otherwise), then `then` decides how it goes on (garbage, reset, stall). */
export function sseThen(head: string | Uint8Array, then: (response: ServerResponse) => void, contentType = 'text/event-stream'): Answer {
  return (_request, response) => {
    response.writeHead(200, { 'content-type': contentType });
    response.write(head, () => setTimeout(() => then(response), 20));
  };
}

/**
 * The first `count` SSE events of a capture, byte for byte: each ends with a blank line, whatever
 * the line ends (Gemini sends CRLF).
 */
export function firstEvents(text: string, count: number): string {
  return (text.match(/[\s\S]*?(?:\r\n\r\n|\n\n)/g) ?? []).slice(0, count).join('');
}
