/**
 * One HTTP request from a chosen loopback address (127.0.0.x), so that one test machine can stand
 * for several clients: the gateway, or a proxy in front of it, sees each as its own TCP peer.
 */
import { request } from 'node:http';

export interface AnswerFrom {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RequestFrom {
  /** The local address to connect from (127.0.0.1 by default). */
  from?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** Sends one request to `url` from `options.from`, on a connection of its own. */
export function httpFrom(url: string, options: RequestFrom = {}): Promise<AnswerFrom> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        localAddress: options.from ?? '127.0.0.1',
        agent: false,
        headers: options.headers ?? {},
      },
      (answer) => {
        let body = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => (body += chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body }));
        answer.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}
