/**
 * HTTP/1.1 over a bare TCP socket (node:net), for what no HTTP client will send: malformed request
 * lines, duplicate Content-Length, oversized headers, a missing Host, slow writers.
 */
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Header names lower-cased; the last value wins. */
  headers: Record<string, string>;
  body: string;
}

/** Host and port of a harness base URL. */
export function addressOf(baseUrl: string): { host: string; port: number } {
  const url = new URL(baseUrl);
  return { host: url.hostname, port: Number(url.port) };
}

/** With `allowHalfOpen`, the socket keeps sending after the server has closed its side (a FIN). */
export function openSocket(baseUrl: string, options: { allowHalfOpen?: boolean } = {}): Promise<Socket> {
  const { host, port } = addressOf(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, allowHalfOpen: options.allowHalfOpen ?? false }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** The first complete answer in `text`, or undefined while it is still arriving. */
export function parseAnswer(text: string, closed: boolean): RawAnswer | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = text.slice(end + 4);
  const length = headers['content-length'];
  if (length === undefined && !closed) return undefined;
  if (length !== undefined && Buffer.byteLength(rest) < Number(length)) return undefined;
  const body = length === undefined ? rest : Buffer.from(rest).subarray(0, Number(length)).toString();
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** Writes `payload` on a new connection and resolves with the first answer (rejects after `timeoutMs`). */
export async function rawExchange(baseUrl: string, payload: string | Buffer, timeoutMs = 5_000): Promise<RawAnswer> {
  const socket = await openSocket(baseUrl);
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms; got ${JSON.stringify(text.slice(0, 200))}`)), timeoutMs);
    const finish = (outcome: RawAnswer | Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const check = (closed: boolean) => {
      const answer = parseAnswer(text, closed);
      if (answer !== undefined) finish(answer);
      else if (closed) finish(new Error(`connection closed without a complete answer: ${JSON.stringify(text.slice(0, 200))}`));
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      check(false);
    });
    socket.on('end', () => check(true));
    socket.on('error', () => check(true));
    socket.write(payload);
  });
}
