/**
 * A webhook receiver for the alert tests: a real HTTP server on 127.0.0.1 that records every
 * request byte for byte and answers with the status the test chooses per request (a receiver
 * that fails first, then recovers). It verifies signatures the way the README tells receivers to,
 * with its own code, not the gateway's. Test-only code.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: { id: string; type: string; created_at: string; data: Record<string, unknown> };
  /** The status the receiver answered. */
  status: number;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Those it answered 2xx. */
  accepted(): ReceivedWebhook[];
  close(): Promise<void>;
}

/** `status(index)` chooses the answer to the index-th request (from 0); 200 by default. */
export async function startWebhookReceiver(options: { port?: number; path?: string; status?: (index: number) => number } = {}): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const status = options.status?.(received.length) ?? 200;
      received.push({ headers: request.headers, rawBody, body: JSON.parse(rawBody) as ReceivedWebhook['body'], status });
      response.writeHead(status, { 'content-type': 'text/plain' });
      response.end(status < 300 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${options.path ?? '/hooks/tollgate'}`,
    port,
    received,
    accepted: () => received.filter((each) => each.status >= 200 && each.status < 300),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The receiver's check, as the README describes it: HMAC-SHA256 with the secret over
 * `${timestamp}.${raw body}`, hex, compared in constant time with each `v1=` value of the
 * signature header, and a timestamp no older than five minutes.
 */
export function verifyWebhook(secret: string, webhook: ReceivedWebhook, nowSeconds = Date.now() / 1000): boolean {
  const timestamp = String(webhook.headers['tollgate-timestamp'] ?? '');
  const signatures = String(webhook.headers['tollgate-signature'] ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.startsWith('v1='))
    .map((part) => Buffer.from(part.slice(3), 'utf8'));
  const expected = Buffer.from(createHmac('sha256', secret).update(`${timestamp}.${webhook.rawBody}`).digest('hex'), 'utf8');
  const fresh = /^\d+$/.test(timestamp) && Math.abs(nowSeconds - Number(timestamp)) <= 300;
  return fresh && signatures.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected));
}

/** Polls `check` until it returns true (every 20 ms), or fails after `timeoutMs` naming `what`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
