/**
 * The HTTP part shared by the scripted upstream models: a real server on loopback that reads each
 * JSON request, checks the upstream key (or the request's signature), records it, and hands the
 * body to the model's script.
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
  /**
   * Whether the request carries the upstream key the gateway was configured with; `request` is the
   * request as received, for a cloud that signs the whole of it (Bedrock's SigV4). `false` is
   * refused with a 401; a {@link Refusal} is sent as the cloud words it.
   */
  authorized(headers: IncomingMessage['headers'], request: ReceivedRequest): boolean | Refusal | Promise<boolean | Refusal>;
}

/** A cloud's own answer refusing a request. */
export interface Refusal {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** A request as it arrived: its method, its path (with the query) and its body's bytes. */
export interface ReceivedRequest {
  method: string;
  path: string;
  body: Buffer;
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
  /** Writes the whole answer for one request (`path` as in {@link RecordedRequest}). */
  answer(body: Record<string, unknown>, response: ServerResponse, path: string): void;
}

export async function startModelDouble(options: ModelDoubleOptions): Promise<ModelDouble> {
  const requests: RecordedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => void handle(request, Buffer.concat(chunks), response));
  });
  const handle = async (request: IncomingMessage, raw: Buffer, response: ServerResponse): Promise<void> => {
    const path = request.url ?? '';
    const known = typeof options.path === 'string' ? path === options.path : options.path.test(path);
    if (request.method !== 'POST' || !known) return sendJson(response, 404, { error: `no route ${request.method} ${path}` });
    const verdict = await options.authorized(request.headers, { method: request.method, path, body: raw });
    if (verdict === false) return sendJson(response, 401, { error: 'bad upstream key' });
    if (verdict !== true) return send(response, verdict);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return sendJson(response, 400, { error: 'body is not JSON' });
    }
    if (!isRecord(body)) return sendJson(response, 400, { error: 'body is not an object' });
    requests.push({ path, headers: request.headers, body });
    try {
      options.answer(body, response, path);
    } catch (error) {
      sendJson(response, 500, { error: `model double failed: ${error instanceof Error ? error.message : String(error)}` });
    }
  };
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
  send(response, { status, headers: { 'content-type': 'application/json' }, body });
}

/** Sends an answer with a JSON body. */
export function send(response: ServerResponse, answer: Refusal): void {
  response.writeHead(answer.status, answer.headers);
  response.end(JSON.stringify(answer.body));
}

/** Writes Server-Sent Events: `event:` lines when named (Anthropic), bare `data:` lines otherwise. */
export function writeSse(response: ServerResponse, events: ReadonlyArray<SseEvent>): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.end(sseText(events));
}

/** One event of an answer's stream: its name (Anthropic's) and its data. */
export interface SseEvent {
  event?: string;
  data: unknown;
}

/** Events as Server-Sent Events text. */
export function sseText(events: ReadonlyArray<SseEvent>): string {
  return events
    .map(({ event, data }) => {
      const payload = typeof data === 'string' ? data : JSON.stringify(data);
      return event === undefined ? `data: ${payload}\n\n` : `event: ${event}\ndata: ${payload}\n\n`;
    })
    .join('');
}
