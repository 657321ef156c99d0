/**
 * An upstream double's HTTP server on a free loopback port: its origin, and a close that cuts the
 * connections still open (a hanging answer included) before it stops listening. Also how a double
 * plays a stream's frames, paced.
 */
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function listenOnLoopback(server: Server): Promise<{ origin: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Writes `frames` one by one, `delayMs` apart (all at once for 0), then ends the answer; stops when
 * the client has gone. The status line and headers are the caller's.
 */
export function playFrames(response: ServerResponse, frames: ReadonlyArray<string | Uint8Array>, delayMs: number): void {
  const queue = [...frames];
  const next = (): void => {
    if (response.destroyed) return;
    const frame = queue.shift();
    if (frame === undefined) {
      response.end();
      return;
    }
    response.write(frame);
    if (delayMs === 0) next();
    else setTimeout(next, delayMs);
  };
  next();
}
