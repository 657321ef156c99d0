/**
 * A real HTTP server on 127.0.0.1 that plays an OpenAI upstream for tests: it records what it
 * received and answers with the recorded wire captures of this folder. Test-only code.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the double saw it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
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

const FIXTURES = new URL('./', import.meta.url);

/** A fixture's text, with `{{BASE_URL}}` and `{{API_KEY}}` filled in when given. */
export function fixture(name: string, fill: { baseUrl?: string; apiKey?: string } = {}): string {
  let text = readFileSync(new URL(name, FIXTURES), 'utf8');
  if (fill.baseUrl !== undefined) text = text.replaceAll('{{BASE_URL}}', fill.baseUrl);
  if (fill.apiKey !== undefined) text = text.replaceAll('{{API_KEY}}', fill.apiKey);
  return text;
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

/** Sends `head` as a 200 SSE stream, then `then` decides how it goes on (garbage, reset, stall). */
export function sseThen(head: string, then: (response: ServerResponse) => void): Answer {
  return (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(head, () => setTimeout(() => then(response), 20));
  };
}

/** The first `count` SSE events of a capture (each ends with a blank line). */
export function firstEvents(text: string, count: number): string {
  return text.split('\n\n').slice(0, count).map((event) => `${event}\n\n`).join('');
}
