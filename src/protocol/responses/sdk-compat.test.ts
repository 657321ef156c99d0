/**
 * The codec against the official openai SDK over real HTTP: a loopback server decodes what the SDK
 * sends with decodeResponsesBody and answers with what ResponsesEncoder produces for a scripted
 * event list. `responses.stream()` rebuilds the response from the events and throws when they break
 * its invariants, so a passing `finalResponse()` proves the stream is SDK-valid.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalEvent, Usage } from '../canonical.js';
import { decodeResponsesBody } from './decode-request.js';
import { ResponsesEncoder } from './encoder.js';

interface Script {
  events: CanonicalEvent[];
  usage: Usage;
  failure?: { code: string; message: string };
}

const usage: Usage = { inputTokens: 30, cachedInputTokens: 10, outputTokens: 14, reasoningTokens: 4 };

let server: Server;
let client: OpenAI;
let script: Script = { events: [], usage };
const seenBodies: unknown[] = [];

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

beforeAll(async () => {
  server = createServer((request, response) => {
    void (async () => {
      const body = await readJson(request);
      seenBodies.push(body);
      const decoded = decodeResponsesBody(body);
      const encoder = new ResponsesEncoder({
        responseId: 'resp_sdk',
        createdAt: Math.floor(Date.now() / 1000),
        model: decoded.request.model,
        request: decoded.request,
        stream: decoded.request.stream,
        store: decoded.store,
        metadata: decoded.metadata,
        previousResponseId: decoded.previousResponseId,
        echo: decoded.echo,
      });
      const frames = [...encoder.start(), ...script.events.flatMap((event) => encoder.push(event))];
      frames.push(...(script.failure ? encoder.fail(script.failure.code, script.failure.message, script.usage) : encoder.finish(script.usage)));
      if (!decoded.request.stream) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(encoder.response()));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const frame of frames) response.write(frame);
      response.end();
    })().catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: String(error), type: 'server_error', param: null, code: null } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new OpenAI({ apiKey: 'x', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('responses.stream() accepts the encoded stream', () => {
  it('rebuilds a text answer, delta by delta, with usage', async () => {
    script = { events: [{ type: 'response-start', upstreamModel: 'up' }, { type: 'text-delta', delta: 'Hello' }, { type: 'text-delta', delta: ' world' }, { type: 'finish', reason: 'stop' }], usage };
    const stream = client.responses.stream({ model: 'model-5.6', input: 'hi' });
    const snapshots: string[] = [];
    stream.on('response.output_text.delta', (event) => snapshots.push(event.snapshot));
    const response = await stream.finalResponse();
    expect(snapshots).toEqual(['Hello', 'Hello world']);
    expect(response.output_text).toBe('Hello world');
    expect(response.status).toBe('completed');
    expect(response.usage).toEqual({
      input_tokens: 30,
      input_tokens_details: { cached_tokens: 10 },
      output_tokens: 14,
      output_tokens_details: { reasoning_tokens: 4 },
      total_tokens: 44,
    });
    expect(seenBodies.at(-1)).toMatchObject({ model: 'model-5.6', input: 'hi', stream: true });
  });

  it('rebuilds reasoning, text and parallel function calls', async () => {
    script = {
      events: [
        { type: 'reasoning-delta', delta: 'Need weather.' },
        { type: 'text-delta', delta: 'Let me check.' },
        { type: 'tool-call-start', index: 0, callId: 'call_a', name: 'weather' },
        { type: 'tool-call-start', index: 1, callId: 'call_b', name: 'weather' },
        { type: 'tool-call-delta', index: 0, delta: '{"city":' },
        { type: 'tool-call-delta', index: 1, delta: '{"city":"Rome"}' },
        { type: 'tool-call-delta', index: 0, delta: '"Oslo"}' },
        { type: 'tool-call-end', index: 0 },
        { type: 'tool-call-end', index: 1 },
        { type: 'finish', reason: 'tool_calls' },
      ],
      usage,
    };
    const argumentSnapshots: string[] = [];
    const stream = client.responses.stream({
      model: 'model-5.6',
      input: 'weather in Oslo and Rome?',
      tools: [{ type: 'function', name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }],
      reasoning: { effort: 'high' },
    });
    stream.on('response.function_call_arguments.delta', (event) => argumentSnapshots.push(event.snapshot));
    const response = await stream.finalResponse();
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(response.output_text).toBe('Let me check.');
    expect(response.output.slice(2)).toMatchObject([
      { type: 'function_call', call_id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}', status: 'completed' },
      { type: 'function_call', call_id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}', status: 'completed' },
    ]);
    expect(argumentSnapshots).toEqual(['{"city":', '{"city":"Rome"}', '{"city":"Oslo"}']);
    expect(response.reasoning).toEqual({ effort: 'high', summary: null });
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(4);
  });

  it('reports a length stop as incomplete', async () => {
    script = { events: [{ type: 'text-delta', delta: 'Cut sh' }, { type: 'finish', reason: 'length' }], usage };
    const response = await client.responses.stream({ model: 'model-5.6', input: 'hi', max_output_tokens: 16 }).finalResponse();
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.max_output_tokens).toBe(16);
    expect(response.output_text).toBe('Cut sh');
  });

  it('reports a mid-stream failure as a failed response with the partial output', async () => {
    script = {
      events: [{ type: 'text-delta', delta: 'Part' }, { type: 'tool-call-start', index: 0, callId: 'call_x', name: 'f' }],
      usage: { inputTokens: 30, cachedInputTokens: 0, outputTokens: 2, reasoningTokens: 0 },
      failure: { code: 'server_error', message: 'The upstream connection was lost.' },
    };
    const response = await client.responses.stream({ model: 'model-5.6', input: 'hi' }).finalResponse();
    expect(response.status).toBe('failed');
    expect(response.error).toEqual({ code: 'server_error', message: 'The upstream connection was lost.' });
    expect(response.output_text).toBe('Part');
    expect(response.output[1]).toMatchObject({ type: 'function_call', call_id: 'call_x', status: 'incomplete' });
  });
});

describe('responses.create() without streaming', () => {
  it('reads the JSON response object', async () => {
    script = { events: [{ type: 'text-delta', delta: 'Plain ' }, { type: 'text-delta', delta: 'answer.' }, { type: 'finish', reason: 'stop' }], usage };
    const response = await client.responses.create({ model: 'model-5.6', input: 'hi', metadata: { team: 'a' }, store: false });
    expect(response.output_text).toBe('Plain answer.');
    expect(response).toMatchObject({ id: 'resp_sdk', object: 'response', status: 'completed', model: 'model-5.6', store: false, metadata: { team: 'a' } });
    expect(response.usage?.total_tokens).toBe(44);
    expect(seenBodies.at(-1)).not.toHaveProperty('stream');
  });
});
