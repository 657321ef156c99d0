/**
 * Answers the gateway gives before it has read the whole body (a 413 over the body limit, a 401
 * from the key check, which runs before the body is read) reach a client that is still sending:
 * the connection is closed only after the body has ended (a lingering close, http/lingering-close.ts),
 * so the client reads the full answer and never gets EPIPE or ECONNRESET. Driven over a raw TCP
 * socket that sends the rest of its body only once the answer is in, and through the openai SDK.
 */
import type { Socket } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';
import { openSocket, parseAnswer, type RawAnswer } from '../support/raw-http.js';

/** Small, so that bodies several times over it stay quick to send. */
const BODY_LIMIT = 256 * 1024;
const CHUNK = 64 * 1024;
const REPEATS = 20;

const TOO_LARGE = '{"error":{"message":"Request body too large.","type":"invalid_request_error","code":"request_too_large"}}';
const INVALID_TOKEN = '{"error":{"message":"Invalid token.","type":"service_api_error","code":""}}';

interface Exchange {
  answer: RawAnswer | undefined;
  /** Socket errors the client saw (EPIPE, ECONNRESET…). */
  errors: string[];
  /** Body bytes written before the connection went away. */
  written: number;
  /** Whether the server ended the connection cleanly (a FIN, not a reset). */
  endedByServer: boolean;
}

function write(socket: Socket, data: string): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    socket.write(data, () => resolve());
  });
}

/**
 * Sends `head` and the first chunk of the body, waits until the whole answer has arrived, then
 * sends the rest of the body (`total` bytes in all, chunked when `chunked`), and waits for the
 * server to close the connection.
 */
async function sendAfterTheAnswer(baseUrl: string, head: string, total: number, chunked: boolean): Promise<Exchange> {
  // A client that goes on sending after the server's FIN, as HTTP clients writing a body do.
  const socket = await openSocket(baseUrl, { allowHalfOpen: true });
  const exchange: Exchange = { answer: undefined, errors: [], written: 0, endedByServer: false };
  let text = '';
  let answered: () => void = () => {};
  const answerIn = new Promise<void>((resolve) => (answered = resolve));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
    exchange.answer ??= parseAnswer(text, false);
    if (exchange.answer !== undefined) answered();
  });
  socket.on('end', () => {
    exchange.endedByServer = true;
    exchange.answer ??= parseAnswer(text, true);
    answered();
  });
  socket.on('error', (error: Error & { code?: string }) => {
    exchange.errors.push(error.code ?? error.message);
    answered();
  });
  const frame = (size: number) => (chunked ? `${size.toString(16)}\r\n${'x'.repeat(size)}\r\n` : 'x'.repeat(size));
  await write(socket, head);
  // Up to the answer: as much as it takes (a chunked body's 413 comes once the limit is passed).
  const sendUntilAnswered = (async () => {
    while (exchange.answer === undefined && exchange.errors.length === 0 && exchange.written < total && !socket.destroyed) {
      const size = Math.min(CHUNK, total - exchange.written);
      await write(socket, frame(size));
      exchange.written += size;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  await Promise.race([answerIn, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  await sendUntilAnswered;
  expect(exchange.answer, `an answer while the body is still being sent: ${JSON.stringify(text.slice(0, 200))}`).toBeDefined();
  expect(exchange.written).toBeLessThan(total);
  // The rest, after the answer.
  while (exchange.written < total && !socket.destroyed) {
    const size = Math.min(CHUNK, total - exchange.written);
    await write(socket, frame(size));
    exchange.written += size;
  }
  if (chunked) await write(socket, '0\r\n\r\n');
  // Done sending: our FIN, so that the connection can close on both sides.
  socket.end();
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  socket.destroy();
  return exchange;
}

describe('answers sent before the whole body has arrived', () => {
  let harness: Harness;
  let secret: string;

  beforeAll(async () => {
    harness = await startHarness({
      catalog: { ...(testCatalog() as Record<string, unknown>), limits: { max_body_bytes: BODY_LIMIT }, rate_limits: { auth_failures_per_minute: 0 } },
    });
    ({ secret } = await harness.newAccount('5'));
  });
  afterAll(async () => harness?.close());

  const head = (authorization: string, length: string) =>
    `POST /v1/responses HTTP/1.1\r\nHost: gateway\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\n${length}\r\n`;

  function expectAnswered(exchange: Exchange, status: number, body: string, total: number): void {
    expect(exchange.errors).toEqual([]);
    expect(exchange.answer?.status).toBe(status);
    expect(exchange.answer?.body).toBe(body);
    expect(exchange.answer?.headers.connection).toBe('close');
    expect(exchange.answer?.headers['x-request-id']).toMatch(/^req_/);
    // The whole body was taken, then the server closed its side: no reset.
    expect(exchange.written).toBe(total);
    expect(exchange.endedByServer).toBe(true);
  }

  it(`413: a body three times the limit, sent on after the answer, ${REPEATS} times with Content-Length and chunked`, async () => {
    const total = 3 * BODY_LIMIT;
    for (let round = 0; round < REPEATS; round++) {
      const sized = await sendAfterTheAnswer(harness.baseUrl, head(`Bearer ${secret}`, `Content-Length: ${total}\r\n`), total, false);
      expectAnswered(sized, 413, TOO_LARGE, total);
      const chunked = await sendAfterTheAnswer(harness.baseUrl, head(`Bearer ${secret}`, 'Transfer-Encoding: chunked\r\n'), total, true);
      expectAnswered(chunked, 413, TOO_LARGE, total);
    }
  });

  it(`401: a bad key with a large body, sent on after the answer, ${REPEATS} times, also when the client asks to close`, async () => {
    const total = 2 * BODY_LIMIT;
    for (let round = 0; round < REPEATS; round++) {
      for (const key of ['Bearer sk-tg-0000000000000000000000000000000000000000', 'Basic abc']) {
        const closing = await sendAfterTheAnswer(harness.baseUrl, head(key, `Content-Length: ${total}\r\nConnection: close\r\n`), total, false);
        expectAnswered(closing, 401, INVALID_TOKEN, total);
        // A keep-alive client's connection is closed too: its unread body is not worth reading to reuse it.
        const plain = await sendAfterTheAnswer(harness.baseUrl, head(key, `Content-Length: ${total}\r\n`), total, false);
        expectAnswered(plain, 401, INVALID_TOKEN, total);
      }
    }
  });

  it('stops reading after four body limits: a client that sends on and on is cut off, having had its answer', async () => {
    const total = 64 * BODY_LIMIT;
    const exchange = await sendAfterTheAnswer(harness.baseUrl, head(`Bearer ${secret}`, `Content-Length: ${total}\r\n`), total, false);
    expect(exchange.answer?.status).toBe(413);
    expect(exchange.answer?.body).toBe(TOO_LARGE);
    expect(exchange.written).toBeLessThan(total);
  });

  it('the openai SDK sending a large body gets the API error (401, 413), not a connection error', async () => {
    const input = 'lorem ipsum '.repeat((3 * BODY_LIMIT) / 12);
    for (let round = 0; round < 5; round++) {
      const stranger = new OpenAI({ apiKey: 'sk-tg-0000000000000000000000000000000000000000', baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
      const refused = await stranger.responses.create({ model: 'model-5.6', input }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((refused as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);

      const tooLarge = await harness.client(secret, { maxRetries: 0 }).responses.create({ model: 'model-5.6', input }).catch((error: unknown) => error);
      expect(tooLarge).toBeInstanceOf(OpenAI.APIError);
      expect(tooLarge).not.toBeInstanceOf(OpenAI.APIConnectionError);
      expect((tooLarge as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    }
  });
});
