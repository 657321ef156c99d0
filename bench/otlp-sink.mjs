/**
 * An OpenTelemetry collector that keeps nothing, for the traced gateway of the benchmark: a
 * dependency-free node:http server that reads each OTLP/HTTP export (`POST /v1/traces`, protobuf or
 * JSON), discards it and answers an empty success, so that what is measured is the gateway's cost
 * of tracing, not a collector's.
 *
 * Run as a script it listens on 127.0.0.1:$PORT (0 = any) and prints `LISTENING <port>`.
 */
import { createServer } from 'node:http';

let exports = 0;
let bytes = 0;
const server = createServer((request, response) => {
  request.on('data', (chunk) => (bytes += chunk.length));
  request.on('end', () => {
    exports += 1;
    const json = String(request.headers['content-type']).startsWith('application/json');
    response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
    response.end(json ? '{}' : undefined);
  });
});
server.keepAliveTimeout = 60_000;
server.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) }, () => {
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});
process.on('SIGTERM', () => {
  process.stdout.write(`received ${exports} exports, ${bytes} bytes\n`);
  process.exit(0);
});
