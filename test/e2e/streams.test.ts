/**
 * Streams that do not end well: an upstream failing mid-stream becomes an error in the client's
 * protocol (and the stream ends); failover before the first byte; a hanging upstream times out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

describe.each(engines)('stream failures on %s', (engine) => {
  let harness: Harness;
  let secret: string;

  beforeAll(async () => {
    harness = await startHarness({ engine });
    ({ secret } = await harness.newAccount('5'));
  });
  afterAll(async () => harness?.close());

  it('chat: a mid-stream failure is an error event and no [DONE]; the SDK throws', async () => {
    const response = await harness.post('/v1/chat/completions', { model: 'mid-fail-model', messages: [{ role: 'user', content: 'hi there friend' }], stream: true }, secret);
    expect(response.status).toBe(200);
    const text = await response.text();
    const events = text.split('\n\n').filter((frame) => frame.startsWith('data: '));
    const last = events.at(-1)!;
    expect(JSON.parse(last.slice(6))).toMatchObject({ error: { type: 'server_error' } });
    expect(text).not.toContain('[DONE]');
    expect(events.length).toBeGreaterThan(2);

    const stream = await harness.client(secret).chat.completions.create({ model: 'mid-fail-model', messages: [{ role: 'user', content: 'x y z' }], stream: true });
    await expect(
      (async () => {
        for await (const chunk of stream) void chunk;
      })(),
    ).rejects.toThrow(/mid-stream/);
  });

  it('responses: a mid-stream failure ends with response.failed', async () => {
    const response = await harness.post('/v1/responses', { model: 'mid-fail-model', input: 'hi there friend', stream: true }, secret);
    const frames = (await response.text()).trim().split('\n\n');
    const last = frames.at(-1)!;
    expect(last).toMatch(/^event: response\.failed\n/);
    const payload = JSON.parse(last.split('\ndata: ')[1]!) as { response: { status: string; error: { code: string } }; sequence_number: number };
    expect(payload.response.status).toBe('failed');
    expect(payload.sequence_number).toBe(frames.length - 1);
  });

  it('non-stream: a mid-stream failure is a 502 in the error format', async () => {
    const response = await harness.post('/v1/chat/completions', { model: 'mid-fail-model', messages: [{ role: 'user', content: 'hi' }] }, secret);
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({ error: { type: 'server_error', code: 'upstream_error' } });
  });

  it('fails over to the next target before the first byte', async () => {
    const completion = await harness.client(secret).chat.completions.create({ model: 'failover-model', messages: [{ role: 'user', content: 'anyone?' }] });
    expect(completion.choices[0]?.message.content).toMatch(/anyone/);
    const stream = harness.client(secret).responses.stream({ model: 'failover-model', input: 'streamed anyone?' });
    expect((await stream.finalResponse()).status).toBe('completed');
  });

  it('a hanging upstream is given up on after its first-byte timeout', async () => {
    const started = Date.now();
    const response = await harness.post('/v1/responses', { model: 'hang-model', input: 'hello?', stream: true }, secret);
    expect(response.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
