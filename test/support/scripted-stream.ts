/**
 * An upstream answer (for upstream-double.ts) that streams in OpenAI's wire formats, Chat
 * Completions on `/chat/completions`, Responses on `/responses` and Anthropic's Messages on
 * `/messages`, following a script: a first
 * event, some text deltas, then it holds the stream open until the gateway hangs up, cuts it, or
 * finishes without reporting usage. And the input tokens such an upstream bills for a request, as
 * it counts them: the real tokenizer (gpt-tokenizer, o200k_base) over each message's whole text,
 * with OpenAI's chat framing (3 tokens to prime the reply, 4 per message). Test-only code.
 */
import { countTokens } from 'gpt-tokenizer';
import type { Answer, ReceivedRequest } from './upstream-double.js';
import { textOf } from './weather-tool.js';

export interface StreamScript {
  /** Text deltas sent after the first event. */
  deltas: readonly string[];
  /**
   * After the deltas: hold the stream open (until the gateway hangs up), cut it, or finish it
   * without usage; or, instead of any answer, refuse in the stream after the 200 (Chat and Messages
   * only: an in-band error, as Anthropic sends `overloaded_error`), then end it.
   */
  then: 'hold' | 'cut' | 'finish-without-usage' | 'refuse';
}

const TOKENS_PER_REPLY = 3;
const TOKENS_PER_MESSAGE = 4;

/** The input tokens the upstream bills for `request` (a Chat or Responses body). */
export function upstreamInputTokens(request: ReceivedRequest): number {
  const body = request.body;
  const texts: string[] = [];
  if (typeof body.instructions === 'string') texts.push(body.instructions);
  const messages = Array.isArray(body.messages) ? body.messages : typeof body.input === 'string' ? [{ content: body.input }] : Array.isArray(body.input) ? body.input : [];
  for (const message of messages as Array<{ content?: unknown }>) texts.push(textOf(message.content));
  return TOKENS_PER_REPLY + texts.reduce((sum, text) => sum + TOKENS_PER_MESSAGE + countTokens(text), 0);
}

/**
 * What the Messages double says it read, in `message_start`: Anthropic's tokenizer is not ours, so
 * its count differs from the gateway's (here 5% more, split as Anthropic splits it: uncached
 * input, a cache read of 1,000 tokens and a cache write of 200).
 */
export function anthropicInputUsage(request: ReceivedRequest): { input_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number } {
  const total = Math.ceil(upstreamInputTokens(request) * 1.05);
  return { input_tokens: total - 1_200, cache_read_input_tokens: 1_000, cache_creation_input_tokens: 200 };
}

/** Streams `script` in the wire format of the request's path. */
export function scriptedStream(script: StreamScript): Answer {
  return async (request, response) => {
    const events =
      script.then === 'refuse' ? [inBandRefusal(request.path)] : request.path.endsWith('/responses') ? responsesEvents(script) : request.path.endsWith('/messages') ? messagesEvents(script, request) : chatEvents(script);
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of events) {
      response.write(event);
      // One event per turn, as an upstream's network would deliver them.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (script.then === 'cut') response.destroy();
    else if (script.then === 'finish-without-usage' || script.then === 'refuse') response.end();
    // 'hold': the stream stays open until the gateway closes the connection.
  };
}

function chatEvents(script: StreamScript): string[] {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '' }), ...script.deltas.map((delta) => chunk({ content: delta }))];
  if (script.then === 'finish-without-usage') events.push(chunk({}, 'stop'), 'data: [DONE]\n\n');
  return events;
}

/** An error in the stream, in place of any answer: Anthropic's overloaded error, or OpenAI's in-band error object. */
function inBandRefusal(path: string): string {
  if (path.endsWith('/messages')) return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`;
  return `data: ${JSON.stringify({ error: { message: 'The server is overloaded.', type: 'server_error', code: null } })}\n\n`;
}

/** A Messages stream: its `message_start` reports the input; 'finish-without-usage' is not one Anthropic sends. */
function messagesEvents(script: StreamScript, request: ReceivedRequest): string[] {
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const message = { id: 'msg_scripted', type: 'message', role: 'assistant', model: 'upstream-model', content: [], stop_reason: null, stop_sequence: null, usage: { ...anthropicInputUsage(request), output_tokens: 1 } };
  const events = [event('message_start', { message })];
  if (script.deltas.length > 0) {
    events.push(
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ...script.deltas.map((text) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
    );
  }
  return events;
}

function responsesEvents(script: StreamScript): string[] {
  const text = script.deltas.join('');
  const message = { id: 'msg_scripted', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
  const response = (status: string, output: unknown[]) => ({ id: 'resp_scripted', object: 'response', created_at: 1, status, model: 'upstream-model', output, usage: null });
  const reference = { item_id: message.id, output_index: 0, content_index: 0 };
  const events: Array<Record<string, unknown> & { type: string }> = [{ type: 'response.created', response: response('in_progress', []) }];
  if (script.deltas.length > 0) {
    events.push(
      { type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
      { type: 'response.content_part.added', ...reference, part: { type: 'output_text', text: '', annotations: [] } },
      ...script.deltas.map((delta) => ({ type: 'response.output_text.delta', ...reference, delta })),
    );
  }
  if (script.then === 'finish-without-usage') {
    events.push(
      { type: 'response.output_text.done', ...reference, text },
      { type: 'response.content_part.done', ...reference, part: message.content[0] },
      { type: 'response.output_item.done', output_index: 0, item: message },
      { type: 'response.completed', response: response('completed', [message]) },
    );
  }
  return events.map((event, sequence) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence })}\n\n`);
}

/** Whether the connection of `request` closed before the double finished (the gateway hung up). */
export async function hungUp(request: ReceivedRequest): Promise<boolean> {
  await request.connectionClosed;
  return !request.answerFinishedAtClose();
}
