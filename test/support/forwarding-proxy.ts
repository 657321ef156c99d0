/**
 * A reverse proxy in front of the gateway, as deployments put one (nginx, a load balancer): it
 * forwards each request from its own address and appends the client's address to
 * `X-Forwarded-For` (keeping what the client sent there, as `proxy_add_x_forwarded_for` does).
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ForwardingProxy {
  /** Where clients connect: `http://127.0.0.1:<port>`. */
  baseUrl: string;
  close(): Promise<void>;
}

/** A proxy listening on 127.0.0.1 that forwards everything to `targetBaseUrl` from `from`. */
export async function startForwardingProxy(targetBaseUrl: string, from = '127.0.0.1'): Promise<ForwardingProxy> {
  const target = new URL(targetBaseUrl);
  const server: Server = createServer((incoming, outgoing) => {
    const client = incoming.socket.remoteAddress ?? '';
    const forwarded = incoming.headers['x-forwarded-for'];
    const headers = { ...incoming.headers, 'x-forwarded-for': forwarded === undefined ? client : `${String(forwarded)}, ${client}` };
    const upstream = request(
      { host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers, localAddress: from, agent: false },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
