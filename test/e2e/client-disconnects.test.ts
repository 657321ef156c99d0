/**
 * Clients that leave mid-request are normal, not failures: on every surface, before the answer
 * began (while the upstream is still thinking) or in the middle of a stream, the gateway logs the
 * departure at debug with the request id, counts it in `tollgate_client_disconnects_total`, and
 * logs no warning, no error and no stack for it; its request log row carries no error code. A real
 * upstream failure is still logged as one.
 */
import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { sampleSum } from '../support/prometheus.js';
import { CHAT_COMPLETION, chatChunk } from '../support/chat-bodies.js';
import { startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** In a prompt: the upstream double waits this long before it answers at all. */
const HOLD_ON = 'hold-on';


/** A Chat Completions upstream: slow to start when asked to hold on, then streams slowly. */
async function chatUpstream(request: { body: Record<string, unknown>; rawBody: string }, response: ServerResponse): Promise<void> {
  if (request.rawBody.includes(HOLD_ON)) await sleep(3_000);
  if (response.destroyed) return;
  if (request.body.stream !== true) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(CHAT_COMPLETION);
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (let i = 0; i < 60 && !response.destroyed; i++) {
    response.write(chatChunk(`w${i} `));
    await sleep(50);
  }
  response.end('data: [DONE]\n\n');
}

const SURFACES = [
  { surface: 'chat', path: '/v1/chat/completions', body: (text: string, stream: boolean) => ({ model: 'relay', stream, messages: [{ role: 'user', content: text }] }) },
  { surface: 'responses', path: '/v1/responses', body: (text: string, stream: boolean) => ({ model: 'relay', stream, input: text }) },
  { surface: 'messages', path: '/v1/messages', body: (text: string, stream: boolean) => ({ model: 'relay', stream, max_tokens: 100, messages: [{ role: 'user', content: text }] }) },
] as const;

describe('clients that disconnect mid-request', () => {
  let harness: Harness;
  let upstream: UpstreamDouble;
  let failing: UpstreamDouble;
  let secret: string;
  let accountId: string;
  const lines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    upstream = await startUpstreamDouble(chatUpstream);
    failing = await startUpstreamDouble((_request, response) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'upstream broke', type: 'server_error' } }));
    });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        callback();
      },
    });
    const model = (id: string, provider: string) => ({ id, prices: { input: '1', output: '1' }, max_output_tokens: 512, targets: [{ provider, model: 'upstream-model' }] });
    harness = await startHarness({
      catalog: {
        providers: [
          { name: 'up', type: 'openai', base_url: upstream.baseUrl, api_key_env: 'UPSTREAM_KEY', api: 'chat' },
          { name: 'down', type: 'openai', base_url: failing.baseUrl, api_key_env: 'UPSTREAM_KEY', api: 'chat' },
        ],
        models: [model('relay', 'up'), model('broken', 'down')],
        rate_limits: { requests: 10_000, window_seconds: 60 },
      },
      env: { UPSTREAM_KEY: 'sk-upstream' },
      logger: pino({ level: 'debug' }, sink),
    });
    ({ secret, accountId } = await harness.newAccount('10'));
  });

  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
    await failing?.close();
  });

  const send = (path: string, body: object, signal?: AbortSignal): Promise<Response> =>
    fetch(`${harness.baseUrl}${path}`, {
      method: 'POST',
      ...(signal === undefined ? {} : { signal }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify(body),
    });

  /** Leaves once the upstream has the request and before it answered anything. */
  async function leaveBeforeTheAnswer(path: string, body: object): Promise<void> {
    const controller = new AbortController();
    const seen = upstream.requests.length;
    const pending = send(path, body, controller.signal).catch((error: unknown) => error);
    await expect.poll(() => upstream.requests.length, { timeout: 3_000, interval: 10 }).toBe(seen + 1);
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
  }

  /** Leaves after the stream's first bytes arrived. */
  async function leaveMidStream(path: string, body: object): Promise<void> {
    const controller = new AbortController();
    const response = await send(path, body, controller.signal);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    controller.abort();
    await reader.cancel().catch(() => undefined);
  }

  const scrape = async (): Promise<string> => (await fetch(`${harness.baseUrl}/metrics`)).text();
  const disconnects = (text: string, labels: Record<string, string>): number => sampleSum(text, 'tollgate_client_disconnects_total', labels);

  it('are logged at debug with the request id and counted, with no warning, error or stack', async () => {
    const before = await scrape();
    lines.length = 0;
    for (const { path, body } of SURFACES) {
      await leaveBeforeTheAnswer(path, body(`${HOLD_ON} please`, false));
      await leaveBeforeTheAnswer(path, body(`${HOLD_ON} please`, true));
      await leaveMidStream(path, body('stream to me', true));
    }
    const departures = () => lines.filter((line) => line.msg === 'client disconnected');
    await expect.poll(() => departures().length, { timeout: 5_000 }).toBe(9);
    const after = await scrape();
    for (const { surface } of SURFACES) {
      expect([surface, disconnects(after, { surface, stage: 'before_answer' }) - disconnects(before, { surface, stage: 'before_answer' })]).toEqual([surface, 2]);
      expect([surface, disconnects(after, { surface, stage: 'mid_answer' }) - disconnects(before, { surface, stage: 'mid_answer' })]).toEqual([surface, 1]);
    }
    const requestIds = departures().map((line) => line.requestId);
    expect(new Set(requestIds).size).toBe(9);
    for (const line of departures()) {
      expect(line.level).toBe(20);
      expect(String(line.requestId)).toMatch(/^req_/);
    }
    // Their rows wait for the handlers to settle; nothing of them is a warning, an error or a stack.
    await expect.poll(async () => (await harness.store.listRequestLog({ accountId }, { limit: 50 })).rows.length, { timeout: 5_000 }).toBe(9);
    const loud = lines.filter((line) => Number(line.level) >= 40 || line.err !== undefined || JSON.stringify(line).includes('AbortError'));
    expect(loud).toEqual([]);
    const rows = (await harness.store.listRequestLog({ accountId }, { limit: 50 })).rows;
    expect(rows.map((row) => row.errorCode)).toEqual(Array(9).fill(null));
    expect(rows.map((row) => row.status).sort()).toEqual([200, 200, 200, 499, 499, 499, 499, 499, 499]);
  });

  it('still logs a real upstream failure as one, and does not count it as a departure', async () => {
    const before = await scrape();
    lines.length = 0;
    const response = await send('/v1/chat/completions', { model: 'broken', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(503);
    const requestId = response.headers.get('x-request-id');
    await response.text();
    const failed = lines.filter((line) => line.requestId === requestId && line.msg === 'request failed');
    expect(failed.map((line) => line.level)).toEqual([40]);
    expect(lines.some((line) => line.msg === 'upstream target failed' && line.level === 40)).toBe(true);
    expect(lines.filter((line) => line.msg === 'client disconnected')).toEqual([]);
    const after = await scrape();
    expect(disconnects(after, {})).toBe(disconnects(before, {}));
  });
});
