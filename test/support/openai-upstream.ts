/**
 * An upstream double: a real HTTP server on loopback that speaks OpenAI's Chat Completions wire
 * format (JSON and SSE), slowly when asked, and records what it received and whether the gateway
 * hung up on it before the answer was complete.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface UpstreamDouble {
  baseUrl: string;
  requests: Array<{ path: string; headers: IncomingMessage['headers']; body: Record<string, unknown> }>;
  /** Requests whose connection closed before the double finished answering. */
  abortedCount(): number;
  close(): Promise<void>;
}

export interface UpstreamOptions {
  /** Content chunks per streamed answer. */
  chunks?: number;
  /** Delay between chunks. */
  chunkDelayMs?: number;
}

export async function startOpenAIUpstream(options: UpstreamOptions = {}): Promise<UpstreamDouble> {
  const chunks = options.chunks ?? 5;
  const delay = options.chunkDelayMs ?? 0;
  const requests: UpstreamDouble['requests'] = [];
  let aborted = 0;
  const server: Server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    request.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      requests.push({ path: request.url ?? '', headers: request.headers, body });
      let finished = false;
      response.on('close', () => {
        if (!finished) aborted += 1;
      });
      const base = { id: 'chatcmpl-upstream', created: 1767225600, model: String(body.model) };
      const usage = { prompt_tokens: 11, completion_tokens: chunks, total_tokens: 11 + chunks, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 0 } };
      if (body.stream !== true) {
        finished = true;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(chunks) }, finish_reason: 'stop', logprobs: null }], usage, upstream_extra: 'kept' }));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (payload: Record<string, unknown>) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...payload })}\n\n`;
      let sent = 0;
      const tick = () => {
        if (response.destroyed) return;
        if (sent === 0) response.write(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], usage: null }));
        if (sent < chunks) {
          sent += 1;
          response.write(chunk({ choices: [{ index: 0, delta: { content: 'word ' }, finish_reason: null }], usage: null }));
          setTimeout(tick, delay);
          return;
        }
        response.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }));
        response.write(chunk({ choices: [], usage }));
        response.write('data: [DONE]\n\n');
        finished = true;
        response.end();
      };
      tick();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    abortedCount: () => aborted,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
