/**
 * The two upstreams Claude Code is run through, each a real HTTP server speaking its real wire
 * format and playing the scripted model of claude-script.ts:
 * - an Anthropic Messages upstream (docs/wire-protocols.md §4.4): named events, a `ping`, thinking
 *   blocks with a signature, and usage with cache reads, cache writes and the thinking count; at
 *   Anthropic's address, at a Vertex AI Claude model's (§19.3), or as Claude on AWS Bedrock's
 *   InvokeModelWithResponseStream (§18.6);
 * - a chat-only OpenAI upstream (§1.4): `reasoning_content` deltas, tool calls in fragments, and
 *   a usage chunk with cached and reasoning counts; at OpenAI's address, or at an Azure OpenAI
 *   deployment's (§17).
 * Each records the usage it reported, so a test can price it and compare with the ledger.
 */
import type { ServerResponse } from 'node:http';
import { readAnthropicConversation } from '../codex/anthropic-model-double.js';
import { readChatConversation } from '../codex/chat-model-double.js';
import type { BedrockAddress } from '../codex/bedrock-address.js';
import { startModelDouble, writeSse, type DoubleAddress, type ModelDouble } from '../codex/model-double-server.js';
import { CLAUDE_ANSWER_MODEL } from '../support/bedrock-upstream.js';
import { claudeTurn, type ClaudeTurn } from './claude-script.js';

/** What an upstream reported for one answer, in canonical terms (input includes both cache counts). */
export interface ReportedUsage {
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}

export interface ScriptedDouble extends ModelDouble {
  reported: ReportedUsage[];
}

/** Per answer: distinct, non-round counts, so a wrong sum cannot match by chance. */
const ANTHROPIC_USAGE = { input_tokens: 1_203, cache_creation_input_tokens: 2_411, cache_read_input_tokens: 5_077, output_tokens: 61 };
const THINKING_TOKENS = 17;
const CHAT_USAGE = { prompt_tokens: 6_311, cached_tokens: 4_099, completion_tokens: 53 };
const CHAT_REASONING_TOKENS = 13;

/**
 * At Anthropic's address with its key in `x-api-key`, unless `at` says otherwise: a Vertex AI
 * address (`vertexAddress`), or a Bedrock `invoke` address (its Messages body, its event stream).
 */
export async function startAnthropicClaudeDouble(upstreamKey: string, workspace: () => string, at?: DoubleAddress | BedrockAddress): Promise<ScriptedDouble> {
  const bedrock = at !== undefined && 'writeStream' in at ? at : undefined;
  const reported: ReportedUsage[] = [];
  const double = await startModelDouble({
    path: '/v1/messages',
    authorized: (headers) => headers['x-api-key'] === upstreamKey,
    ...at,
    answer: (body, response, path) => {
      if (bedrock?.refuses(body, response) === true) return;
      const turn = claudeTurn(readAnthropicConversation(body), workspace());
      const thinkingTokens = turn.thinking === undefined ? 0 : THINKING_TOKENS;
      reported.push({
        inputTokens: ANTHROPIC_USAGE.input_tokens + ANTHROPIC_USAGE.cache_creation_input_tokens + ANTHROPIC_USAGE.cache_read_input_tokens,
        cachedInputTokens: ANTHROPIC_USAGE.cache_read_input_tokens,
        cacheWriteInputTokens: ANTHROPIC_USAGE.cache_creation_input_tokens,
        outputTokens: ANTHROPIC_USAGE.output_tokens,
        reasoningTokens: thinkingTokens,
      });
      // Vertex and Bedrock name the model in the address, not in the body; the answer names Anthropic's.
      const model = typeof body.model === 'string' ? body.model : CLAUDE_ANSWER_MODEL;
      writeAnthropicTurn(response, model, turn, bedrock?.streams(path) ?? body.stream === true, thinkingTokens, bedrock?.writeStream ?? writeSse);
    },
  });
  return { ...double, reported };
}

function writeAnthropicTurn(response: ServerResponse, model: string, turn: ClaudeTurn, stream: boolean, thinkingTokens: number, writeStream: typeof writeSse): void {
  const usage = { ...ANTHROPIC_USAGE, output_tokens_details: { thinking_tokens: thinkingTokens } };
  const blocks: Array<Record<string, unknown>> = [];
  if (turn.thinking !== undefined) blocks.push({ type: 'thinking', thinking: turn.thinking, signature: 'sig-double-1' });
  if (turn.kind === 'text') blocks.push({ type: 'text', text: turn.text });
  else blocks.push({ type: 'tool_use', id: `toolu_double_${turn.call.name}`, name: turn.call.name, input: turn.call.arguments });
  const stopReason = turn.kind === 'call' ? 'tool_use' : 'end_turn';
  const message = { id: 'msg_double', type: 'message', role: 'assistant', model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage };
  if (!stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(message));
    return;
  }
  const events: Array<{ event: string; data: Record<string, unknown> }> = [
    { event: 'message_start', data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...ANTHROPIC_USAGE, output_tokens: 1 } } } },
    { event: 'ping', data: { type: 'ping' } },
  ];
  blocks.forEach((block, index) => {
    const delta = (payload: Record<string, unknown>) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: payload } });
    if (block.type === 'thinking') {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } } });
      events.push(delta({ type: 'thinking_delta', thinking: String(block.thinking) }), delta({ type: 'signature_delta', signature: String(block.signature) }));
    } else if (block.type === 'text') {
      const text = String(block.text);
      const cut = Math.floor(text.length / 2);
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
      events.push(delta({ type: 'text_delta', text: text.slice(0, cut) }), delta({ type: 'text_delta', text: text.slice(cut) }));
    } else {
      const input = JSON.stringify(block.input);
      const cut = Math.floor(input.length / 2);
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { ...block, input: {} } } });
      events.push(delta({ type: 'input_json_delta', partial_json: input.slice(0, cut) }), delta({ type: 'input_json_delta', partial_json: input.slice(cut) }));
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage } });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  writeStream(response, events);
}

/** At OpenAI's address with a bearer key, unless `at` says otherwise (e.g. `azureAddress`). */
export async function startChatClaudeDouble(upstreamKey: string, workspace: () => string, at?: DoubleAddress): Promise<ScriptedDouble> {
  const reported: ReportedUsage[] = [];
  const double = await startModelDouble({
    path: '/v1/chat/completions',
    authorized: (headers) => headers.authorization === `Bearer ${upstreamKey}`,
    ...at,
    answer: (body, response) => {
      const turn = claudeTurn(readChatConversation(body), workspace());
      const reasoningTokens = turn.thinking === undefined ? 0 : CHAT_REASONING_TOKENS;
      reported.push({
        inputTokens: CHAT_USAGE.prompt_tokens,
        cachedInputTokens: CHAT_USAGE.cached_tokens,
        cacheWriteInputTokens: 0,
        outputTokens: CHAT_USAGE.completion_tokens,
        reasoningTokens,
      });
      writeChatTurn(response, String(body.model), turn, reasoningTokens);
    },
  });
  return { ...double, reported };
}

function writeChatTurn(response: ServerResponse, model: string, turn: ClaudeTurn, reasoningTokens: number): void {
  const base = { id: 'chatcmpl-double', object: 'chat.completion.chunk', created: 1767225600, model };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] });
  const usage = {
    ...base,
    choices: [],
    usage: {
      prompt_tokens: CHAT_USAGE.prompt_tokens,
      completion_tokens: CHAT_USAGE.completion_tokens,
      total_tokens: CHAT_USAGE.prompt_tokens + CHAT_USAGE.completion_tokens,
      prompt_tokens_details: { cached_tokens: CHAT_USAGE.cached_tokens },
      completion_tokens_details: { reasoning_tokens: reasoningTokens },
    },
  };
  const events: Array<{ data: unknown }> = [{ data: chunk({ role: 'assistant', content: '' }) }];
  if (turn.thinking !== undefined) events.push({ data: chunk({ reasoning_content: turn.thinking }) });
  if (turn.kind === 'text') {
    events.push({ data: chunk({ content: turn.text }) }, { data: chunk({}, 'stop') });
  } else {
    const args = JSON.stringify(turn.call.arguments);
    const cut = Math.floor(args.length / 2);
    events.push(
      { data: chunk({ tool_calls: [{ index: 0, id: `call_double_${turn.call.name}`, type: 'function', function: { name: turn.call.name, arguments: '' } }] }) },
      { data: chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, cut) } }] }) },
      { data: chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(cut) } }] }) },
      { data: chunk({}, 'tool_calls') },
    );
  }
  events.push({ data: usage }, { data: '[DONE]' });
  writeSse(response, events);
}
