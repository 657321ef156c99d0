/**
 * A parser error on a connection whose streamed answer is under way (the client pipelines garbage
 * after its request) must not write the gateway's raw 400 into that answer: the connection is cut
 * instead. Before any answer has begun, the same garbage gets its 400 (hostile-http.test.ts).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { scriptedStream } from '../support/scripted-stream.js';
import { startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';

const PRICES = { input: '1', cached_input: '0.5', output: '4' };

describe('a parser error while a stream is under way on its connection', () => {
  let harness: Harness;
  let upstream: UpstreamDouble;

  beforeAll(async () => {
    upstream = await startUpstreamDouble(scriptedStream({ deltas: ['Hello'], then: 'hold' }));
    const timeouts = { first_byte_ms: 30_000, idle_ms: 30_000 };
    harness = await startHarness({
      catalog: {
        providers: [{ name: 'openai', type: 'openai', base_url: upstream.baseUrl, api_key_env: 'TEST_UPSTREAM_KEY', timeouts }],
        models: [{ id: 'held-model', prices: PRICES, max_output_tokens: 64, targets: [{ provider: 'openai', model: 'upstream-model' }] }],
        rate_limits: { requests: 10_000, window_seconds: 60, tokens_per_minute: 0 },
      },
      env: { TEST_UPSTREAM_KEY: 'sk-upstream' },
    });
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it('cuts the connection rather than write its 400 into the answer', async () => {
    const { secret } = await harness.newAccount('5');
    const body = JSON.stringify({ model: 'held-model', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    const { hostname, port } = new URL(harness.baseUrl);
    const received = await new Promise<string>((resolve, reject) => {
      let text = '';
      let sentGarbage = false;
      const socket = connect(Number(port), hostname, () => {
        socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      });
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (!sentGarbage && text.includes('Hello')) {
          sentGarbage = true;
          socket.write('GE(T /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n');
        }
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      setTimeout(() => {
        socket.destroy();
        reject(new Error(`the connection was not cut: ${text}`));
      }, 10_000).unref();
    });
    expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(received).toContain('Hello');
    expect(received).not.toContain('HTTP/1.1 400');
  });
});
