/**
 * A client that stops reading a streamed answer stops the gateway reading the upstream: what the
 * gateway holds for a stream stays bounded by the sockets' buffers, not by what the upstream sends
 * (docs/architecture.md, "Streams"). And once the client reads again, the stream goes on.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startUpstreamDouble, type UpstreamDouble } from '../support/upstream-double.js';

/** Far more than every socket buffer on the way can hold (loopback buffers grow to a few MiB). */
const TOTAL_BYTES = 96 * 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const frame = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [{ index: 0, delta: { content: 'word '.repeat(800) }, finish_reason: null }] })}\n\n`;

/** Resolves once `response` can take more, or is gone. */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

describe('a client that stops reading a pass-through stream', () => {
  let harness: Harness | undefined;
  let upstream: UpstreamDouble | undefined;
  afterEach(async () => {
    await harness?.close();
    await upstream?.close();
  });

  it('stops the gateway reading the upstream, until it reads again', async () => {
    let written = 0;
    upstream = await startUpstreamDouble(async (_request, response: ServerResponse) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      while (written < TOTAL_BYTES && !response.destroyed) {
        written += frame.length;
        if (!response.write(frame)) await drained(response);
      }
      response.end();
    });
    harness = await startHarness({ catalog: testCatalog({ upstreamBaseUrl: upstream.baseUrl }), env: { TEST_UPSTREAM_KEY: 'sk-x' } });
    const { secret, accountId } = await harness.newAccount('10');
    const answer = await harness.post('/v1/chat/completions', { model: 'relay-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }, secret);
    expect(answer.status).toBe(200);

    // The client reads nothing: the upstream's writes stall well before the end of its answer.
    const stalled = async (): Promise<boolean> => {
      const before = written;
      await sleep(250);
      return written === before;
    };
    await expect.poll(stalled, { timeout: 20_000, interval: 0 }).toBe(true);
    const stalledAt = written;
    expect(stalledAt).toBeLessThan(TOTAL_BYTES / 2);

    // Reading again lets the upstream go on.
    const reader = answer.body!.getReader();
    let read = 0;
    while (read < 4 * stalledAt) {
      const { done, value } = await reader.read();
      if (done) break;
      read += value.byteLength;
    }
    expect(written).toBeGreaterThan(stalledAt);
    await reader.cancel();
    // Cut by its client, the stream is billed for what it produced.
    await expect.poll(() => harness!.store.countOpenHolds(accountId), { timeout: 5_000 }).toBe(0);
    expect((await harness.store.listLedger(accountId)).filter((entry) => entry.kind === 'charge')).toHaveLength(1);
  });
});
