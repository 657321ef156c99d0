/**
 * The HTTP part shared by the scripted upstream models: a real server on loopback that reads each
 * JSON request, records it, checks the upstream key, and hands the body to the model's script.
 * A script that throws answers 500 with the reason, so a failing double shows up in the gateway's
 * error and in Codex's output instead of hanging the run.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isRecord } from './shell-call.js';

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface ModelDouble {
  /** Base address including `/v1`, as the catalog's `base_url` wants it. */
  baseUrl: string;
  /** The server's origin (`http://127.0.0.1:<port>`), as Azure's `endpoint` wants it. */
  origin: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Where a scripted model answers and how it checks the caller: a path and an authentication. */
export interface DoubleAddress {
  /** The only path answered (or paths matching it); anything else is a 404. */
  path: string | RegExp;
  /** Whether the request carries the upstream key the gateway was configured with. */
  authorized(headers: IncomingMessage['headers']): boolean;
}

/** The Azure OpenAI API version the scripted models answer on deployment addresses. */
export const AZURE_API_VERSION = '2024-10-21';

/**
 * A scripted model played as an Azure OpenAI deployment or `/openai/v1/` address
 * (docs/wire-protocols.md §17): the resource's key in `api-key`, the path Azure's. With
 * `deployment`, the deployment form and its `api-version`; without, the v1 form.
 */
export function azureAddress(apiKey: string, operation: 'chat/completions' | 'responses', deployment?: string): DoubleAddress {
  return {
    path: deployment === undefined ? `/openai/v1/${operation}` : `/openai/deployments/${deployment}/${operation}?api-version=${AZURE_API_VERSION}`,
    authorized: (headers) => headers['api-key'] === apiKey && headers.authorization === undefined,
  };
}

export interface ModelDoubleOptions extends DoubleAddress {
  /** Writes the whole answer for one request. */
  answer(body: Record<string, unknown>, response: ServerResponse): void;
}

export async function startModelDouble(options: ModelDoubleOptions): Promise<ModelDouble> {
  const requests: RecordedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      const known = typeof options.path === 'string' ? path === options.path : options.path.test(path);
      if (request.method !== 'POST' || !known) return sendJson(response, 404, { error: `no route ${request.method} ${path}` });
      if (!options.authorized(request.headers)) return sendJson(response, 401, { error: 'bad upstream key' });
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return sendJson(response, 400, { error: 'body is not JSON' });
      }
      if (!isRecord(body)) return sendJson(response, 400, { error: 'body is not an object' });
      requests.push({ path, headers: request.headers, body });
      try {
        options.answer(body, response);
      } catch (error) {
        sendJson(response, 500, { error: `model double failed: ${error instanceof Error ? error.message : String(error)}` });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** Writes Server-Sent Events: `event:` lines when named (Anthropic), bare `data:` lines otherwise. */
export function writeSse(response: ServerResponse, events: ReadonlyArray<{ event?: string; data: unknown }>): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const { event, data } of events) {
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    response.write(event === undefined ? `data: ${payload}\n\n` : `event: ${event}\ndata: ${payload}\n\n`);
  }
  response.end();
}
