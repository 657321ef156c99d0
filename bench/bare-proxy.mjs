/**
 * The yardstick: a bare pass-through proxy (node:http server + undici Pool, keep-alive both sides,
 * no parsing, no checks). The request body is small JSON, read whole; the answer goes straight
 * from undici's parser into the client's response with `pool.stream()`, undici's leanest path.
 * Run as a script: UPSTREAM=http://127.0.0.1:<port> PORT=<port> node bench/bare-proxy.mjs
 */
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { Pool } from 'undici';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'upgrade', 'proxy-connection', 'te', 'trailer']);
const forwardable = (headers) => Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));

const pool = new Pool(process.env.UPSTREAM, { keepAliveTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0 });
const server = createServer((request, response) => {
  const parts = [];
  request.on('data', (chunk) => parts.push(chunk));
  request.on('end', () => {
    const options = { path: request.url, method: request.method, headers: forwardable(request.headers), body: Buffer.concat(parts), opaque: response };
    const toClient = ({ statusCode, headers, opaque }) => opaque.writeHead(statusCode, forwardable(headers));
    pool.stream(options, toClient, (error) => {
      if (error === null) return;
      if (!response.headersSent) response.writeHead(502);
      response.destroy();
    });
  });
});
server.keepAliveTimeout = 60_000;
server.requestTimeout = 0;
server.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0), backlog: 4096 }, () => {
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
