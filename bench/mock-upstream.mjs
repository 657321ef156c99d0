/**
 * The benchmark's upstream: a dependency-free node:http server on loopback that speaks just enough
 * of OpenAI's Chat Completions and Responses wire formats (JSON and SSE, with usage) for the gateway's
 * pass-through path, and of Anthropic's Messages API (`POST /v1/messages`, JSON and SSE, see
 * docs/wire-protocols.md §4.3 and §4.4) for its translated routes, with tiny fixed answers so that
 * it costs as little CPU as possible.
 *
 * A model name containing "slow" gets a slow stream: the role chunk and one word at once (so the
 * client sees its first chunk without waiting), then one word per SLOW_INTERVAL_MS until the client
 * hangs up. Everything else answers at once; streams carry STREAM_CHUNKS words.
 *
 * Run as a script it listens on 127.0.0.1:$PORT (0 = any) and prints `LISTENING <port>`.
 */
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { clearInterval, setInterval } from 'node:timers';
import { pathToFileURL } from 'node:url';

export const STREAM_CHUNKS = 20;
const SLOW_INTERVAL_MS = Number(process.env.BENCH_SLOW_INTERVAL_MS ?? 1000);
const SLOW_MAX_CHUNKS = 600;
const MODEL = 'mock-model';
const CREATED = 1767225600;

const chatUsage = { prompt_tokens: 9, completion_tokens: STREAM_CHUNKS, total_tokens: 9 + STREAM_CHUNKS, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
const chatJson = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: CREATED,
  model: MODEL,
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! '.repeat(STREAM_CHUNKS).trim(), refusal: null }, finish_reason: 'stop', logprobs: null }],
  usage: chatUsage,
});

const chatChunk = (choices, usage = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model: MODEL, choices, usage })}\n\n`;
const chatRoleChunk = chatChunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
const chatWordChunk = chatChunk([{ index: 0, delta: { content: 'Hello! ' }, finish_reason: null }]);
const chatStreamEnd = [chatChunk([{ index: 0, delta: {}, finish_reason: 'stop' }]), chatChunk([], chatUsage), 'data: [DONE]\n\n'].join('');

const responsesUsage = { input_tokens: 9, input_tokens_details: { cached_tokens: 0 }, output_tokens: STREAM_CHUNKS, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 9 + STREAM_CHUNKS };
const responsesText = 'Hello! '.repeat(STREAM_CHUNKS);
const responseObject = (status, text, usage) => ({
  id: 'resp_bench',
  object: 'response',
  created_at: CREATED,
  status,
  error: null,
  incomplete_details: null,
  model: MODEL,
  output: text === undefined ? [] : [{ id: 'msg_bench', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], text }] }],
  usage,
});
const responsesJson = JSON.stringify(responseObject('completed', responsesText, responsesUsage));
const responsesEvent = (sequence, payload) => `event: ${payload.type}\ndata: ${JSON.stringify({ ...payload, sequence_number: sequence })}\n\n`;
const responsesStreamStart = [
  responsesEvent(0, { type: 'response.created', response: responseObject('in_progress', undefined, null) }),
  responsesEvent(1, { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_bench', type: 'message', status: 'in_progress', role: 'assistant', content: [] } }),
  responsesEvent(2, { type: 'response.content_part.added', item_id: 'msg_bench', output_index: 0, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } }),
].join('');
const responsesDelta = (sequence) => responsesEvent(sequence, { type: 'response.output_text.delta', item_id: 'msg_bench', output_index: 0, content_index: 0, delta: 'Hello! ' });
const responsesStreamEnd = (sequence) =>
  [
    responsesEvent(sequence, { type: 'response.output_text.done', item_id: 'msg_bench', output_index: 0, content_index: 0, text: responsesText }),
    responsesEvent(sequence + 1, { type: 'response.output_item.done', output_index: 0, item: responseObject('completed', responsesText, null).output[0] }),
    responsesEvent(sequence + 2, { type: 'response.completed', response: responseObject('completed', responsesText, responsesUsage) }),
  ].join('');

const messagesUsage = { input_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: STREAM_CHUNKS };
const messagesText = 'Hello! '.repeat(STREAM_CHUNKS).trim();
const messagesJson = JSON.stringify({
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  model: MODEL,
  content: [{ type: 'text', text: messagesText, citations: null }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: messagesUsage,
});
const messagesEvent = (payload) => `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;
const messagesStreamStart = [
  messagesEvent({
    type: 'message_start',
    message: { id: 'msg_bench', type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { ...messagesUsage, output_tokens: 1 } },
  }),
  messagesEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
].join('');
const messagesDelta = messagesEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello! ' } });
const messagesStreamEnd = [
  messagesEvent({ type: 'content_block_stop', index: 0 }),
  messagesEvent({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: STREAM_CHUNKS } }),
  messagesEvent({ type: 'message_stop' }),
].join('');

const ANSWERS = {
  '/v1/chat/completions': { json: chatJson, stream: streamChat },
  '/v1/responses': { json: responsesJson, stream: streamResponses },
  '/v1/messages': { json: messagesJson, stream: streamMessages },
};

/** Creates (does not start) the mock server. */
export function createMockUpstream() {
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/healthz') {
      response.end('ok');
      return;
    }
    const answer = ANSWERS[request.url];
    if (request.method !== 'POST' || answer === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end('{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}');
      return;
    }
    const parts = [];
    request.on('data', (chunk) => parts.push(chunk));
    request.on('end', () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end('{"error":{"message":"bad json","type":"invalid_request_error","param":null,"code":null}}');
        return;
      }
      if (body.stream !== true) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(answer.json);
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      answer.stream(response, typeof body.model === 'string' && body.model.includes('slow'));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  server.requestTimeout = 0;
  return server;
}

function streamChat(response, slow) {
  response.write(chatRoleChunk);
  if (!slow) {
    for (let index = 0; index < STREAM_CHUNKS; index += 1) response.write(chatWordChunk);
    response.end(chatStreamEnd);
    return;
  }
  response.write(chatWordChunk);
  dripSlowly(response, () => response.write(chatWordChunk), () => response.end(chatStreamEnd));
}

function streamResponses(response, slow) {
  response.write(responsesStreamStart);
  let sequence = 3;
  if (!slow) {
    for (let index = 0; index < STREAM_CHUNKS; index += 1) response.write(responsesDelta(sequence++));
    response.end(responsesStreamEnd(sequence));
    return;
  }
  response.write(responsesDelta(sequence++));
  dripSlowly(response, () => response.write(responsesDelta(sequence++)), () => response.end(responsesStreamEnd(sequence)));
}

function streamMessages(response, slow) {
  response.write(messagesStreamStart);
  if (!slow) {
    for (let index = 0; index < STREAM_CHUNKS; index += 1) response.write(messagesDelta);
    response.end(messagesStreamEnd);
    return;
  }
  response.write(messagesDelta);
  dripSlowly(response, () => response.write(messagesDelta), () => response.end(messagesStreamEnd));
}

/** One more chunk per interval until the client hangs up (or SLOW_MAX_CHUNKS, then the end). */
function dripSlowly(response, writeChunk, end) {
  let sent = 1;
  const timer = setInterval(() => {
    if (sent >= SLOW_MAX_CHUNKS) {
      clearInterval(timer);
      end();
      return;
    }
    sent += 1;
    writeChunk();
  }, SLOW_INTERVAL_MS);
  response.on('close', () => clearInterval(timer));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const server = createMockUpstream();
  server.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0), backlog: 4096 }, () => {
    process.stdout.write(`LISTENING ${server.address().port}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
}
