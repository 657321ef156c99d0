/**
 * A TCP proxy to a real service (Redis, PostgreSQL) that tests take down and bring back, standing
 * in for an outage: stopped, clients see "connection refused"; frozen, they see silence.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Closes the listener and every connection: clients now see "connection refused". */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Keeps the connections open but stops passing bytes (or passes them again). */
  freeze(frozen: boolean): void;
}

/** A TCP proxy to `target` that can be taken down and brought back, standing in for an outage. */
export async function startTcpProxy(target: URL): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let frozen = false;
  const start = async () => {
    const listening = createServer((client) => {
      const upstream = connect(Number(target.port || (target.protocol.startsWith("postgres") ? 5432 : 6379)), target.hostname);
      sockets.add(client).add(upstream);
      // Bytes are dropped while frozen: Redis looks alive (connected) but never answers.
      client.on('data', (chunk) => frozen || upstream.write(chunk));
      upstream.on('data', (chunk) => frozen || client.write(chunk));
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
    await new Promise<void>((resolve) => listening.listen(port, '127.0.0.1', resolve));
    port = (listening.address() as AddressInfo).port;
    server = listening;
  };
  await start();
  return {
    get port() {
      return port;
    },
    start,
    freeze(value) {
      frozen = value;
    },
    async stop() {
      const closing = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      if (closing !== undefined) await new Promise((resolve) => closing.close(resolve));
    },
  };
}
