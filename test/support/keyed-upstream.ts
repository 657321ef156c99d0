/**
 * An OpenAI-compatible upstream double that answers by the key it is sent: a real HTTP server on
 * loopback speaking Chat Completions (a JSON body, or SSE chunks when `stream` is set) whose
 * answer to each call the test chooses from the call's bearer key and how many calls that key has
 * made. It records every call: which key, when, and what it answered. Its refusals echo the key the
 * way OpenAI's do ("Incorrect API key provided: sk-…"), for the gateway to keep it out of sight.
 * Test-only code.
 */
import { createServer, type Server } from 'node:http';
import { listenOnLoopback } from './loopback-server.js';

/** What the double answers one call: 200 (a completion), or an error status with its headers. */
export interface KeyedAnswer {
  status: number;
  headers?: Record<string, string>;
}

export interface KeyedCall {
  /** The bearer key the call carried ('' without one). */
  key: string;
  /** When it arrived (ms since epoch). */
  at: number;
  status: number;
  stream: boolean;
}

export interface KeyedUpstream {
  baseUrl: string;
  calls: KeyedCall[];
  close(): Promise<void>;
}

/** The usage every completion reports: what the tests bill against the catalog's prices. */
export const KEYED_USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

/** `answer(key, index)`: the answer to the `index`-th call (from 0) that carried `key`. */
export async function startKeyedUpstream(answer: (key: string, index: number) => KeyedAnswer): Promise<KeyedUpstream> {
  const calls: KeyedCall[] = [];
  const server: Server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    request.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      const key = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      const index = calls.filter((call) => call.key === key).length;
      const chosen = answer(key, index);
      const stream = body.stream === true;
      calls.push({ key, at: Date.now(), status: chosen.status, stream });
      if (chosen.status !== 200) {
        const message = chosen.status === 401 ? `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.` : `Rate limit reached for key ${key}`;
        const type = chosen.status === 401 ? 'invalid_request_error' : 'requests';
        response.writeHead(chosen.status, { 'content-type': 'application/json', ...chosen.headers });
        response.end(JSON.stringify({ error: { message, type, param: null, code: chosen.status === 401 ? 'invalid_api_key' : 'rate_limit_exceeded' } }));
        return;
      }
      const base = { id: 'chatcmpl-keyed', created: 1767225600, model: String(body.model) };
      if (!stream) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'pooled answer' }, finish_reason: 'stop', logprobs: null }], usage: KEYED_USAGE }));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (payload: Record<string, unknown>) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...payload })}\n\n`;
      response.write(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'pooled ' }, finish_reason: null }], usage: null }));
      response.write(chunk({ choices: [{ index: 0, delta: { content: 'answer' }, finish_reason: null }], usage: null }));
      response.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }));
      response.write(chunk({ choices: [], usage: KEYED_USAGE }));
      response.end('data: [DONE]\n\n');
    });
  });
  const listening = await listenOnLoopback(server);
  return { baseUrl: `${listening.origin}/v1`, calls, close: listening.close };
}
