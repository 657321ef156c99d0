/**
 * Connections that have not sent a byte when the server closes. Node counts a new connection as
 * busy until its first request ends, so `server.close()` waits for it, and it stops the connection
 * checker that would have timed the connection out (a 408 after `headersTimeout`): a client that
 * opened a spare connection, as HTTP clients do, or a slow-loris one, kept a draining instance from
 * stopping until the drain's grace period cut every stream still running. Such a connection has no
 * request to drain, so it is ended at once when the server closes (docs/architecture.md).
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Watches `server`'s connections; the function returned ends those that have sent nothing yet. */
export function watchSilentConnections(server: Server): () => void {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return () => {
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
  };
}
