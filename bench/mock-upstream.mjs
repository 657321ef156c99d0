/**
 * The benchmark's upstream: a dependency-free node:http server on loopback that speaks just enough
 * of OpenAI's Chat Completions and Responses wire formats (JSON and SSE, with usage) for the gateway's
 * pass-through path, of OpenAI's embeddings (`POST /v1/embeddings`, docs/wire-protocols.md §7: one
 * vector per input, floats or base64 float32 as asked), and of Anthropic's Messages API
 * (`POST /v1/messages`, JSON and SSE, see docs/wire-protocols.md §4.3 and §4.4) for its translated
 * routes, with tiny fixed answers so that it costs as little CPU as possible.
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

/** Vector length when the request names no `dimensions`: short, so that the mock stays cheap (OpenAI's small model has 1,536). */
export const EMBEDDING_DIMENSIONS = 256;
/** Answers already written, by shape: the benchmark sends one body over and over, so this stays tiny. */
const embeddingAnswers = new Map();
const MAX_CACHED_EMBEDDING_ANSWERS = 64;

/**
 * The embeddings answer for a request: as many vectors as inputs (a string or one token array is
 * one input), `dimensions` long, floats or (with `encoding_format: "base64"`) little-endian float32
 * in base64, as openai-node asks by default. The vectors differ by position, as a real answer's
 * do, so that no two base64 strings are alike. The usage is a cheap estimate (a token per four
 * characters, or the token array's length): sane and stable, so the gateway bills it as reported.
 */
function embeddingsJson(body) {
  const input = body.input;
  const inputs = typeof input === 'string' || (Array.isArray(input) && input.every((item) => typeof item === 'number')) ? [input] : Array.isArray(input) ? input : [];
  const dimensions = Number.isInteger(body.dimensions) && body.dimensions > 0 ? body.dimensions : EMBEDDING_DIMENSIONS;
  const base64 = body.encoding_format === 'base64';
  const tokens = inputs.reduce((sum, item) => sum + (typeof item === 'string' ? Math.ceil(item.length / 4) : Array.isArray(item) ? item.length : 0), 0);
  const key = `${inputs.length}/${dimensions}/${base64}/${tokens}`;
  const cached = embeddingAnswers.get(key);
  if (cached !== undefined) return cached;
  const data = inputs.map((_, index) => {
    const values = Array.from({ length: dimensions }, (_unused, position) => Math.fround(Math.sin(index * dimensions + position + 1) / 16));
    if (!base64) return { object: 'embedding', index, embedding: values };
    const bytes = Buffer.alloc(dimensions * 4);
    values.forEach((value, position) => bytes.writeFloatLE(value, position * 4));
    return { object: 'embedding', index, embedding: bytes.toString('base64') };
  });
  // `usage` last, as OpenAI writes it: the load generator checks the answer's tail for it.
  const json = JSON.stringify({ object: 'list', data, model: MODEL, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  if (embeddingAnswers.size >= MAX_CACHED_EMBEDDING_ANSWERS) embeddingAnswers.clear();
  embeddingAnswers.set(key, json);
  return json;
}

/** By path: the JSON answer (a string, or made from the request body) and, where there is one, the stream. */
const ANSWERS = {
  '/v1/chat/completions': { json: chatJson, stream: streamChat },
  '/v1/responses': { json: responsesJson, stream: streamResponses },
  '/v1/messages': { json: messagesJson, stream: streamMessages },
  '/v1/embeddings': { json: embeddingsJson },
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
      if (body.stream !== true || answer.stream === undefined) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(typeof answer.json === 'function' ? answer.json(body) : answer.json);
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
