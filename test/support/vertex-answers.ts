/**
 * What the Vertex AI double (vertex-upstream.ts) answers, in each publisher's wire format
 * (docs/wire-protocols.md §19.3–19.4): Gemini's `GenerateContentResponse` chunks as Vertex sends
 * them (`createTime`, `responseId`, `modelVersion`, `usageMetadata` with `trafficType`), and
 * Claude's Messages events and Message objects as Vertex relays them (ids `msg_vrtx_…`). A tool result is quoted, offered tools are called (`get_weather` for Bergen),
 * anything else is greeted; `BREAK_MID` in the prompt ends a stream with an in-band error after
 * its first words. Test-only code.
 */
import type { ServerResponse } from 'node:http';
import { playFrames } from './loopback-server.js';

/** Gemini's usage: 31 prompt tokens (8 cached), 9 candidate tokens and 4 thought tokens. */
export const VERTEX_GEMINI_USAGE = { promptTokenCount: 31, cachedContentTokenCount: 8, candidatesTokenCount: 9, thoughtsTokenCount: 4 };
/** Claude's usage: 21 input tokens besides 6 read from the cache, 12 output. */
export const VERTEX_CLAUDE_USAGE = { input_tokens: 21, cache_creation_input_tokens: 0, cache_read_input_tokens: 6, output_tokens: 12 };
export const GEMINI_GREETING = 'Hello from Vertex Gemini';
export const CLAUDE_GREETING = 'Hello from Vertex Claude';

type Reply = { text: string } | { call: { name: string; arguments: Record<string, unknown> } };

/** A pending answer: its frames (SSE) or body (JSON), written by `play`. */
export interface Played {
  frames: string[];
}

function words(text: string): string[] {
  return text.split(/(?= )/);
}

// ---------------------------------------------------------------------------------------------
// Gemini

function geminiReply(body: Record<string, unknown>): Reply {
  const contents = Array.isArray(body.contents) ? (body.contents as Array<Record<string, unknown>>) : [];
  const parts = (contents.at(-1)?.parts ?? []) as Array<Record<string, unknown>>;
  const result = parts.find((part) => typeof part.functionResponse === 'object')?.functionResponse as Record<string, unknown> | undefined;
  if (result !== undefined) return { text: `The tool said: ${JSON.stringify(result.response)}` };
  const tools = Array.isArray(body.tools) ? (body.tools as Array<Record<string, unknown>>) : [];
  if (tools.some((tool) => Array.isArray(tool.functionDeclarations) && tool.functionDeclarations.length > 0)) return { call: { name: 'get_weather', arguments: { city: 'Bergen' } } };
  return { text: GEMINI_GREETING };
}

export function lastGeminiText(body: Record<string, unknown>): string {
  const contents = Array.isArray(body.contents) ? (body.contents as Array<Record<string, unknown>>) : [];
  return JSON.stringify(contents.at(-1)?.parts ?? []);
}

/** The chunks of a Gemini answer, each a `GenerateContentResponse`. */
export function geminiChunks(body: Record<string, unknown>, model: string): Array<Record<string, unknown>> {
  const reply = geminiReply(body);
  const base = { modelVersion: model, createTime: '2026-01-01T00:00:00.000000Z', responseId: 'vrtxGmn1Rsp0nse' };
  const usage = {
    ...VERTEX_GEMINI_USAGE,
    totalTokenCount: VERTEX_GEMINI_USAGE.promptTokenCount + VERTEX_GEMINI_USAGE.candidatesTokenCount + VERTEX_GEMINI_USAGE.thoughtsTokenCount,
    trafficType: 'ON_DEMAND',
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: VERTEX_GEMINI_USAGE.promptTokenCount }],
    candidatesTokensDetails: [{ modality: 'TEXT', tokenCount: VERTEX_GEMINI_USAGE.candidatesTokenCount }],
  };
  if ('call' in reply) {
    return [{ ...base, candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: reply.call.name, args: reply.call.arguments } }] }, finishReason: 'STOP' }], usageMetadata: usage }];
  }
  const pieces = words(reply.text);
  return pieces.map((piece, index) => {
    const last = index === pieces.length - 1;
    return {
      ...base,
      candidates: [{ content: { role: 'model', parts: [{ text: piece }] }, ...(last ? { finishReason: 'STOP' } : {}) }],
      usageMetadata: last ? usage : { trafficType: 'ON_DEMAND' },
    };
  });
}

/** `streamGenerateContent?alt=sse`: one `data:` event per chunk (CRLF as Google sends). */
export function geminiFrames(body: Record<string, unknown>, model: string): string[] {
  const chunks = geminiChunks(body, model);
  if (lastGeminiText(body).includes('BREAK_MID')) {
    const error = { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } };
    return [`data: ${JSON.stringify(chunks[0])}\r\n\r\n`, `data: ${JSON.stringify(error)}\r\n\r\n`];
  }
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`);
}

/** `generateContent`: the chunks merged into one response. */
export function geminiWhole(body: Record<string, unknown>, model: string): Record<string, unknown> {
  const chunks = geminiChunks(body, model);
  const last = chunks.at(-1)!;
  const parts = chunks.flatMap((chunk) => ((chunk.candidates as Array<{ content: { parts: Array<Record<string, unknown>> } }>)[0]?.content.parts ?? []));
  const text = parts.every((part) => typeof part.text === 'string') ? [{ text: parts.map((part) => String(part.text)).join('') }] : parts;
  return { ...last, candidates: [{ content: { role: 'model', parts: text }, finishReason: 'STOP', avgLogprobs: -0.12 }] };
}

// ---------------------------------------------------------------------------------------------
// Claude

function claudeReply(body: Record<string, unknown>): Reply {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
  const content = messages.at(-1)?.content;
  const blocks = Array.isArray(content) ? (content as Array<Record<string, unknown>>) : [];
  const result = blocks.find((block) => block.type === 'tool_result');
  if (result !== undefined) return { text: `The tool said: ${typeof result.content === 'string' ? result.content : JSON.stringify(result.content)}` };
  if (Array.isArray(body.tools) && body.tools.length > 0) return { call: { name: 'get_weather', arguments: { city: 'Bergen' } } };
  return { text: CLAUDE_GREETING };
}

export function lastClaudeText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
  return JSON.stringify(messages.at(-1)?.content ?? '');
}

let messageCount = 0;

/** `rawPredict`: a whole Message. */
export function claudeWhole(body: Record<string, unknown>, model: string): Record<string, unknown> {
  const reply = claudeReply(body);
  messageCount += 1;
  const content = 'call' in reply ? [{ type: 'tool_use', id: `toolu_vrtx_0${messageCount}`, name: reply.call.name, input: reply.call.arguments }] : [{ type: 'text', text: reply.text }];
  return { id: `msg_vrtx_0${messageCount}`, type: 'message', role: 'assistant', model, content, stop_reason: 'call' in reply ? 'tool_use' : 'end_turn', stop_sequence: null, usage: VERTEX_CLAUDE_USAGE };
}

/** `streamRawPredict`: Messages events, each with its `event:` line. */
export function claudeFrames(body: Record<string, unknown>, model: string): string[] {
  const reply = claudeReply(body);
  messageCount += 1;
  const frame = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const frames = [
    frame('message_start', { message: { id: `msg_vrtx_0${messageCount}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...VERTEX_CLAUDE_USAGE, output_tokens: 1 } } }),
    frame('ping', {}),
  ];
  if ('call' in reply) {
    const json = JSON.stringify(reply.call.arguments);
    frames.push(
      frame('content_block_start', { index: 0, content_block: { type: 'tool_use', id: `toolu_vrtx_0${messageCount}`, name: reply.call.name, input: {} } }),
      frame('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: json.slice(0, 5) } }),
      frame('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: json.slice(5) } }),
    );
  } else {
    frames.push(frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    const pieces = words(reply.text);
    for (const piece of pieces) frames.push(frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } }));
    if (lastClaudeText(body).includes('BREAK_MID')) return [...frames.slice(0, 4), frame('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })];
  }
  frames.push(
    frame('content_block_stop', { index: 0 }),
    frame('message_delta', { delta: { stop_reason: 'call' in reply ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: VERTEX_CLAUDE_USAGE.output_tokens } }),
    frame('message_stop', {}),
  );
  return frames;
}

/** Writes `frames` as an SSE answer, `delayMs` apart. */
export function playVertexFrames(response: ServerResponse, frames: string[], delayMs: number): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'x-vertex-ai-llm-request-type': 'shared' });
  playFrames(response, frames, delayMs);
}
