/**
 * Slow clients (slowloris): 1,000 connections that trickle their headers, trickle their body, or
 * say nothing at all are cut at the configured receive timeouts with a 408 in the spec's format,
 * while other clients are answered meanwhile; and the receive timeouts never cut a long answer.
 * Small timeouts keep the test short; the defaults are in config/schema.ts.
 */
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';
import { openSocket, parseAnswer } from '../support/raw-http.js';

const HEADERS_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 2_500;
const CHECK_INTERVAL_MS = 100;
/** Timeout + one check + the server's linger after its answer + scheduling slack on a busy machine. */
const CLOSED_WITHIN_MS = REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS + 1_000 + 1_500;
const TRICKLE_MS = 250;

interface SlowClient {
  socket: Socket;
  openedAt: number;
  closedAt: number | undefined;
  received: string;
}

async function slowClient(baseUrl: string, first: string, trickle: string | null): Promise<SlowClient> {
  const socket = await openSocket(baseUrl);
  const client: SlowClient = { socket, openedAt: Date.now(), closedAt: undefined, received: '' };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (client.received += chunk));
  socket.on('error', () => undefined);
  const timer = trickle === null ? undefined : setInterval(() => socket.writable && socket.write(trickle), TRICKLE_MS);
  socket.on('close', () => {
    client.closedAt = Date.now();
    clearInterval(timer);
  });
  if (first !== '') socket.write(first);
  return client;
}

describe('slow clients', () => {
  let harness: Harness;
  let secret: string;

  beforeAll(async () => {
    const base = testCatalog() as { providers: unknown[]; models: unknown[] };
    harness = await startHarness({
      catalog: {
        ...base,
        providers: [...base.providers, { name: 'sim-crawl', type: 'simulated', pace_ms: 300 }],
        models: [...base.models, { id: 'crawl-model', prices: { input: '1', output: '4' }, max_output_tokens: 512, targets: [{ provider: 'sim-crawl', model: 'crawl-model' }] }],
        limits: {
          headers_timeout_ms: HEADERS_TIMEOUT_MS,
          request_timeout_ms: REQUEST_TIMEOUT_MS,
          keep_alive_timeout_ms: 1_000,
          connections_check_interval_ms: CHECK_INTERVAL_MS,
        },
      },
    });
    ({ secret } = await harness.newAccount('5'));
  });
  afterAll(async () => harness?.close());

  it('1,000 slowloris connections neither starve a normal client nor outlive the timeouts', async () => {
    const partialHeaders = 'POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n';
    const slowBody = `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"model":`;
    const clients: SlowClient[] = [];
    // In batches, within the listen backlog, so that all are open well before the first timeout.
    for (let batch = 0; batch < 10; batch++) {
      const opened = await Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const kind = i % 3;
          if (kind === 0) return slowClient(harness.baseUrl, partialHeaders, 'X-Slow: 1\r\n');
          if (kind === 1) return slowClient(harness.baseUrl, slowBody, ' ');
          return slowClient(harness.baseUrl, '', null);
        }),
      );
      clients.push(...opened);
    }

    // A normal client is answered while every slow connection is still open.
    const health = await fetch(`${harness.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    const chat = await harness.post('/v1/chat/completions', { model: 'model-5.6', messages: [{ role: 'user', content: 'Hi' }] }, secret);
    expect(chat.status).toBe(200);
    expect(clients.filter((client) => client.closedAt !== undefined)).toHaveLength(0);

    await expect.poll(() => clients.filter((client) => client.closedAt === undefined).length, { timeout: CLOSED_WITHIN_MS + 5_000, interval: 100 }).toBe(0);
    const lifetimes = clients.map((client) => client.closedAt! - client.openedAt);
    // None was cut before its timeout, and none stayed open long after it.
    expect(Math.min(...lifetimes)).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - CHECK_INTERVAL_MS);
    expect(Math.max(...lifetimes)).toBeLessThan(CLOSED_WITHIN_MS);
    for (const client of clients) {
      const answer = parseAnswer(client.received, true);
      expect(answer?.status, client.received.slice(0, 200)).toBe(408);
      expect(answer?.headers['x-request-id']).toMatch(/^req_/);
      expect(answer?.headers.connection).toBe('close');
      expect(answer?.body).toBe('{"error":{"message":"The request was not received in time.","type":"invalid_request_error","code":"request_timeout"}}');
    }
    expect((await fetch(`${harness.baseUrl}/healthz`)).status).toBe(200);
  }, 30_000);

  it('a stream that lasts longer than the request timeout is not cut', async () => {
    const started = Date.now();
    const response = await harness.post('/v1/chat/completions', { model: 'crawl-model', stream: true, messages: [{ role: 'user', content: 'tell me a long story' }] }, secret);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(Date.now() - started).toBeGreaterThan(REQUEST_TIMEOUT_MS + 1_000);
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
  }, 30_000);
});
