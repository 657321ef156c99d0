/**
 * The official `openai` SDK against a real loopback HTTP server that decodes its requests with
 * `decodeChatRequest` and answers with `ChatCompletionsEncoder` output, so both halves of the codec
 * are checked against the client that matters. The model name picks a scripted event sequence.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { APIError, BadRequestError } from 'openai';
import { InvalidRequestError, type CanonicalEvent, type Usage } from '../canonical.js';
import { decodeChatRequest, type DecodedChatRequest } from './decode-request.js';
import { ChatCompletionsEncoder } from './encoder.js';

const USAGE: Usage = { inputTokens: 812, cachedInputTokens: 768, outputTokens: 64, reasoningTokens: 10 };

const SCRIPTS: Record<string, CanonicalEvent[]> = {
  text: [
    { type: 'response-start', upstreamModel: 'upstream-text' },
    { type: 'text-delta', delta: 'Hello' },
    { type: 'text-delta', delta: ', wor' },
    { type: 'text-delta', delta: 'ld!' },
    { type: 'usage', usage: USAGE },
    { type: 'finish', reason: 'stop' },
  ],
  tools: [
    { type: 'response-start', upstreamModel: 'upstream-tools' },
    { type: 'tool-call-start', index: 0, callId: 'call_a1', name: 'weather' },
    { type: 'tool-call-start', index: 1, callId: 'call_b2', name: 'weather' },
    { type: 'tool-call-delta', index: 0, delta: '{"city":' },
    { type: 'tool-call-delta', index: 1, delta: '{"city":' },
    { type: 'tool-call-delta', index: 1, delta: '"Rome"}' },
    { type: 'tool-call-delta', index: 0, delta: '"Oslo"}' },
    { type: 'tool-call-end', index: 1 },
    { type: 'tool-call-end', index: 0 },
    { type: 'finish', reason: 'tool_calls' },
  ],
  fail: [
    { type: 'response-start', upstreamModel: 'upstream-fail' },
    { type: 'text-delta', delta: 'partial' },
    { type: 'error', code: 'upstream_overloaded', message: 'Upstream model overloaded' },
  ],
};

let server: Server;
let client: OpenAI;
/** The last request the server decoded, so tests can check what the SDK sent. */
let lastDecoded: DecodedChatRequest | undefined;

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  let decoded: DecodedChatRequest;
  try {
    decoded = decodeChatRequest(await readJson(request));
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    response.writeHead(400, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message: error.message, type: 'invalid_request_error', param: error.param, code: error.code } }));
    return;
  }
  lastDecoded = decoded;
  const { request: canonical, includeUsage } = decoded;
  const encoder = new ChatCompletionsEncoder({ id: 'chatcmpl-sdk1', created: 1767225600, model: canonical.model, stream: canonical.stream, includeUsage });
  const events = SCRIPTS[canonical.model] ?? [];
  if (!canonical.stream) {
    for (const event of events) encoder.push(event);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(encoder.completion(USAGE)));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let failed = false;
  for (const event of events) {
    for (const frame of encoder.push(event)) response.write(frame);
    if (event.type === 'error') failed = true;
  }
  if (!failed) for (const frame of encoder.finish(USAGE)) response.write(frame);
  response.end();
}

beforeAll(async () => {
  server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new OpenAI({ apiKey: 'test-key', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

const WEATHER_TOOL: OpenAI.Chat.Completions.ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    strict: true,
  },
};

describe('the openai SDK against the Chat Completions codec', () => {
  it('create({stream, include_usage}) reassembles the text and reads the final usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'text',
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let chunkCount = 0;
    for await (const chunk of stream) {
      chunkCount += 1;
      expect(chunk.id).toBe('chatcmpl-sdk1');
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices.length === 0) usage = chunk.usage;
    }
    expect(lastDecoded?.includeUsage).toBe(true);
    expect(text).toBe('Hello, world!');
    expect(chunkCount).toBe(6);
    expect(usage).toMatchObject({
      prompt_tokens: 812,
      completion_tokens: 64,
      total_tokens: 876,
      prompt_tokens_details: { cached_tokens: 768 },
      completion_tokens_details: { reasoning_tokens: 10 },
    });
  });

  it('stream().finalChatCompletion() gives parallel tool calls with parsed arguments', async () => {
    const runner = client.chat.completions.stream({
      model: 'tools',
      messages: [{ role: 'user', content: 'Weather in Oslo and Rome?' }],
      tools: [WEATHER_TOOL],
      parallel_tool_calls: true,
    });
    const completion = await runner.finalChatCompletion();
    expect(lastDecoded?.request.tools).toEqual([{ name: 'weather', parameters: WEATHER_TOOL.function.parameters, strict: true }]);
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const calls = (choice?.message.tool_calls ?? []).map((call) =>
      call.type === 'function' ? { id: call.id, name: call.function.name, parsed: call.function.parsed_arguments } : undefined,
    );
    expect(calls).toEqual([
      { id: 'call_a1', name: 'weather', parsed: { city: 'Oslo' } },
      { id: 'call_b2', name: 'weather', parsed: { city: 'Rome' } },
    ]);
  });

  it('the mid-stream failure frame makes the SDK iteration throw an APIError', async () => {
    const stream = await client.chat.completions.create({ model: 'fail', messages: [{ role: 'user', content: 'x' }], stream: true });
    let text = '';
    const failure = await (async () => {
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(text).toBe('partial');
    expect(failure).toBeInstanceOf(APIError);
    const apiError = failure as APIError;
    expect(apiError.status).toBeUndefined();
    expect(apiError.code).toBe('upstream_overloaded');
    expect(apiError.type).toBe('server_error');
    expect(apiError.message).toContain('Upstream model overloaded');
  });

  it('non-stream create() returns the chat.completion object', async () => {
    const completion = await client.chat.completions.create({ model: 'text', messages: [{ role: 'user', content: 'Say hello' }], max_completion_tokens: 50 });
    expect(lastDecoded?.request.maxOutputTokens).toBe(50);
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message).toEqual({ role: 'assistant', content: 'Hello, world!', refusal: null, annotations: [] });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(768);
    expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(10);
  });

  it('non-stream create() with tools returns null content and the tool calls', async () => {
    const completion = await client.chat.completions.create({ model: 'tools', messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER_TOOL] });
    const message = completion.choices[0]?.message;
    expect(message?.content).toBeNull();
    expect(message?.tool_calls?.map((call) => (call.type === 'function' ? call.function.arguments : ''))).toEqual(['{"city":"Oslo"}', '{"city":"Rome"}']);
  });

  it('a request the decoder refuses surfaces as a BadRequestError with param and code', async () => {
    const failure = await client.chat.completions
      .create({ model: 'text', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high' })
      .then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(BadRequestError);
    expect((failure as BadRequestError).param).toBe('reasoning_effort');
    expect((failure as BadRequestError).code).toBe('unsupported_parameter');
  });
});
