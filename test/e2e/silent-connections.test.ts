/**
 * A connection that has sent nothing when the gateway closes (a client's spare connection, or a
 * slow-loris one) is ended at once: Node would wait for it, with its receive timeouts already
 * stopped, so the close never finished (docs/architecture.md). On the public port and on the admin
 * listener; a request that is running meanwhile still gets its whole answer.
 */
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startHarness } from '../support/harness.js';
import { openSocket } from '../support/raw-http.js';

/** Far beyond what a close takes when nothing is left to drain; without the fix it never ends. */
const CLOSE_WITHIN_MS = 5_000;

/** Resolves when the server has closed `socket`. */
function closedByServer(socket: Socket): Promise<void> {
  socket.on('error', () => undefined);
  socket.resume();
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

async function closesWithin(close: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const done = await Promise.race([close.then(() => true as const), late]);
  clearTimeout(timer);
  return done;
}

describe('connections that have sent nothing when the gateway closes', () => {
  it.each([false, true])('are ended at once, and the close completes (admin listener: %s)', async (adminListener) => {
    const harness = await startHarness({ adminListener });
    const { secret } = await harness.newAccount('5');
    const silent = [await openSocket(harness.baseUrl), await openSocket(harness.baseUrl)];
    if (harness.adminBaseUrl !== undefined) silent.push(await openSocket(harness.adminBaseUrl));
    const closed = silent.map(closedByServer);
    // A request running while the close begins is drained, not cut.
    const running = harness.post('/v1/chat/completions', { model: 'model-5.6', stream: true, messages: [{ role: 'user', content: 'Hi' }] }, secret);
    const response = await running;
    expect(response.status).toBe(200);

    const closing = harness.close();
    const text = await response.text();
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(await closesWithin(closing, CLOSE_WITHIN_MS)).toBe(true);
    await Promise.all(closed);
  });
});
