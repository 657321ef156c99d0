/**
 * An upstream double: a real HTTP server on loopback that speaks OpenAI's Chat Completions wire
 * format (JSON and SSE), slowly when asked, and records what it received and whether the gateway
 * hung up on it before the answer was complete. With a chosen `reply` it also speaks Responses on
 * the `/responses` path (JSON and the full event stream).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback-server.js';

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
  /**
   * The answer to give, chosen per request (`index` counts from 0); without it every answer is
   * `chunks` times "word ". A chosen answer streams as one content chunk, then its tool calls; on
   * the `/responses` path it is answered in the Responses format instead: a message item (when it
   * has content, or has no tool calls), then one `function_call` item per tool call.
   */
  reply?: (body: Record<string, unknown>, index: number) => UpstreamReply;
  /**
   * The Chat `usage` object to report, chosen per request from the body and its size in bytes (a
   * misbehaving upstream reports what it likes); the default is a fixed small one.
   */
  usage?: (body: Record<string, unknown>, bodyBytes: number) => Record<string, unknown>;
}

export interface UpstreamReply {
  content?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
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
      const reply = options.reply?.(body, requests.length);
      requests.push({ path: request.url ?? '', headers: request.headers, body });
      let finished = false;
      response.on('close', () => {
        if (!finished) aborted += 1;
      });
      const base = { id: 'chatcmpl-upstream', created: 1767225600, model: String(body.model) };
      const usage = options.usage?.(body, Buffer.byteLength(raw)) ?? { prompt_tokens: 11, completion_tokens: chunks, total_tokens: 11 + chunks, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 0 } };
      if (reply !== undefined) {
        finished = true;
        if ((request.url ?? '').endsWith('/responses')) answerResponsesWith(response, reply, body, requests.length, options.usage === undefined ? undefined : usage);
        else answerWith(response, reply, body.stream === true, base, usage);
        return;
      }
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
  const listening = await listenOnLoopback(server);
  return {
    baseUrl: `${listening.origin}/v1`,
    requests,
    abortedCount: () => aborted,
    close: listening.close,
  };
}

/** A chosen answer, as one Chat completion or as a chunk stream ending in usage and [DONE]. */
function answerWith(response: ServerResponse, reply: UpstreamReply, stream: boolean, base: Record<string, unknown>, usage: Record<string, unknown>): void {
  const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({ index, id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  const finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
  if (!stream) {
    const message = { role: 'assistant', content: reply.content ?? null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }], usage }));
    return;
  }
  const chunk = (payload: Record<string, unknown>) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...payload })}\n\n`;
  const delta = (fields: Record<string, unknown>, finish: string | null = null) => chunk({ choices: [{ index: 0, delta: fields, finish_reason: finish }], usage: null });
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.write(delta({ role: 'assistant', content: '' }));
  if (reply.content !== undefined) response.write(delta({ content: reply.content }));
  for (const call of toolCalls) response.write(delta({ tool_calls: [call] }));
  response.write(delta({}, finishReason));
  response.write(chunk({ choices: [], usage }));
  response.end('data: [DONE]\n\n');
}

/** A chosen answer as a Responses object, or as its event stream (docs/wire-protocols.md §2.5). */
/** `chatUsage` (the `usage` option's report), when given, is reported in Responses terms instead of the fixed one. */
export function answerResponsesWith(response: ServerResponse, reply: UpstreamReply, body: Record<string, unknown>, count: number, chatUsage?: Record<string, unknown>): void {
  const text = reply.content ?? '';
  const toolCalls = reply.toolCalls ?? [];
  const message = { id: `msg_upstream_${count}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
  const calls = toolCalls.map((call, index) => ({ id: `fc_upstream_${count}_${index}`, type: 'function_call', status: 'completed', call_id: call.id, name: call.name, arguments: call.arguments }));
  // A reply with neither content nor tool calls still answers with one (empty) message.
  const withMessage = reply.content !== undefined || calls.length === 0;
  const output: Array<typeof message | (typeof calls)[number]> = [...(withMessage ? [message] : []), ...calls];
  const final = {
    id: `resp_upstream_${count}`,
    object: 'response',
    created_at: 1767225600,
    status: 'completed',
    model: String(body.model),
    output,
    store: body.store ?? true,
    usage:
      chatUsage === undefined
        ? { input_tokens: 11, input_tokens_details: { cached_tokens: 3 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 16 }
        : { input_tokens: chatUsage.prompt_tokens, output_tokens: chatUsage.completion_tokens, total_tokens: chatUsage.total_tokens },
    upstream_extra: 'kept',
  };
  if (body.stream !== true) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(final));
    return;
  }
  const snapshot = { ...final, status: 'in_progress', output: [], usage: null };
  const events: Array<Record<string, unknown>> = [
    { type: 'response.created', response: snapshot },
    { type: 'response.in_progress', response: snapshot },
  ];
  if (withMessage) {
    const reference = { item_id: message.id, output_index: 0, content_index: 0 };
    events.push(
      { type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
      { type: 'response.content_part.added', ...reference, part: { type: 'output_text', text: '', annotations: [] } },
      { type: 'response.output_text.delta', ...reference, delta: text, logprobs: [] },
      { type: 'response.output_text.done', ...reference, text, logprobs: [] },
      { type: 'response.content_part.done', ...reference, part: message.content[0] },
      { type: 'response.output_item.done', output_index: 0, item: message },
    );
  }
  calls.forEach((call, index) => {
    const outputIndex = index + (withMessage ? 1 : 0);
    const reference = { item_id: call.id, output_index: outputIndex };
    events.push(
      { type: 'response.output_item.added', output_index: outputIndex, item: { ...call, status: 'in_progress', arguments: '' } },
      { type: 'response.function_call_arguments.delta', ...reference, delta: call.arguments },
      { type: 'response.function_call_arguments.done', ...reference, name: call.name, arguments: call.arguments },
      { type: 'response.output_item.done', output_index: outputIndex, item: call },
    );
  });
  events.push({ type: 'response.completed', response: final });
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  events.forEach((event, sequenceNumber) => response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: sequenceNumber })}\n\n`));
  response.end();
}
