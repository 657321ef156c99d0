/**
 * The request log's error code is the one the client read. A Responses pass-through passes the
 * upstream's `response.failed` on as the upstream wrote it, so the row records the upstream's
 * code, not the gateway's `upstream_error` the client never saw; a Chat stream's in-band `error`
 * and an Anthropic `error` event end in the gateway's own failure frame, whose code the row keeps.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { adminClient, type AdminCall } from '../support/admin-client.js';
import { startHarness, type Harness } from '../support/harness.js';
import { listenOnLoopback } from '../support/loopback-server.js';

const sse = (event: string | undefined, data: unknown): string => `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;

/** Answers every route with a stream that starts, then fails in the upstream's own protocol. */
function failingUpstream(request: IncomingMessage, response: ServerResponse): void {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const path = request.url ?? '';
    if (path.endsWith('/responses')) {
      const created = { id: 'resp_up', object: 'response', status: 'in_progress', model: 'up', output: [] };
      response.end(
        sse('response.created', { type: 'response.created', sequence_number: 0, response: created }) +
          sse('response.failed', { type: 'response.failed', sequence_number: 1, response: { ...created, status: 'failed', error: { code: 'server_error', message: 'The model crashed.' } } }),
      );
    } else if (path.endsWith('/chat/completions')) {
      response.end(
        sse(undefined, { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }] }) +
          sse(undefined, { error: { message: 'Too many requests.', type: 'requests', code: 'rate_limit_exceeded' } }),
      );
    } else {
      const message = { id: 'msg_up', type: 'message', role: 'assistant', model: 'up', content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } };
      response.end(sse('message_start', { type: 'message_start', message }) + sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    }
  });
}

describe('the request log records the error code the client read', () => {
  let harness: Harness;
  let upstream: { origin: string; close: () => Promise<void> };
  let call: AdminCall;
  let viewer: string;
  let secret: string;

  beforeAll(async () => {
    upstream = await listenOnLoopback(createServer(failingUpstream));
    const provider = (name: string, type: string, extra: Record<string, unknown> = {}) => ({ name, type, base_url: `${upstream.origin}/v1`, api_key_env: 'UPSTREAM_KEY', ...extra });
    const model = (id: string, name: string) => ({ id, prices: { input: '1', output: '4' }, max_output_tokens: 64, targets: [{ provider: name, model: 'up' }] });
    harness = await startHarness({
      catalog: {
        providers: [provider('responses-up', 'openai', { api: 'responses' }), provider('chat-up', 'openai', { api: 'chat' }), { name: 'claude-up', type: 'anthropic', base_url: upstream.origin, api_key_env: 'UPSTREAM_KEY' }],
        models: [model('responses-model', 'responses-up'), model('chat-model', 'chat-up'), model('claude-model', 'claude-up')],
      },
      env: { UPSTREAM_KEY: 'sk-upstream' },
      router: { failureThreshold: 100, cooldownMs: 1 },
    });
    call = adminClient(harness.baseUrl);
    viewer = (await createAdminToken(harness.store, { role: 'viewer' }, CLI_ACTOR)).secret;
    ({ secret } = await harness.newAccount('5'));
  });

  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });

  async function loggedCode(requestId: string): Promise<unknown> {
    return vi.waitFor(
      async () => {
        const answer = await call('GET', `/requests?request_id=${requestId}`, viewer);
        const rows = answer.body.data as Array<{ error_code: unknown }>;
        expect(rows).toHaveLength(1);
        return rows[0]!.error_code;
      },
      { timeout: 5_000, interval: 50 },
    );
  }

  it.each([
    ['/v1/responses', { model: 'responses-model', input: 'Hi', stream: true }, 'server_error'],
    ['/v1/chat/completions', { model: 'chat-model', messages: [{ role: 'user', content: 'Hi' }], stream: true }, 'upstream_error'],
    ['/v1/messages', { model: 'claude-model', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }], stream: true }, 'api_error'],
  ])('%s passed through and failing in-band: the row says what the stream did', async (path, body, code) => {
    const response = await harness.post(path, body, secret);
    const text = await response.text();
    const lastFrame = text.trim().split('\n\n').at(-1) ?? '';
    expect(lastFrame).toContain(`"${code}"`);
    expect(await loggedCode(response.headers.get('x-request-id') ?? '')).toBe(code);
  });
});
