/**
 * An Anthropic Messages upstream (`POST /v1/messages`, streamed; docs/wire-protocols.md §4.4) playing a
 * model that runs Codex's shell tool once and then answers: turn 1 streams a `tool_use` block,
 * turn 2 (whose last user turn holds the `tool_result`) streams the final text. Events are named
 * (`event:` lines) and include a `ping`, as Anthropic sends them; a request with `thinking` gets a
 * signed thinking block first.
 */
import type { ServerResponse } from 'node:http';
import { startModelDouble, writeSse, type ModelDouble } from './model-double-server.js';
import { scriptedTurn, type Conversation } from './model-script.js';
import { isRecord, textOf, type DeclaredTool } from './shell-call.js';

export const ANTHROPIC_TOOL_USE_ID = 'toolu_tollgate_shell_1';

export async function startAnthropicModelDouble(upstreamKey: string): Promise<ModelDouble> {
  return startModelDouble({
    path: '/v1/messages',
    // The API takes `x-api-key`; the newest SDK sends a bearer token instead (§4.1).
    authorized: (headers) => headers['x-api-key'] === upstreamKey || headers.authorization === `Bearer ${upstreamKey}`,
    answer,
  });
}

function answer(body: Record<string, unknown>, response: ServerResponse): void {
  if (body.stream !== true) throw new Error('expected a streamed request');
  const turn = scriptedTurn(readAnthropicConversation(body));
  const message = {
    id: 'msg_double',
    type: 'message',
    role: 'assistant',
    model: String(body.model),
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 900, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
  const opening = [
    { event: 'message_start', data: { type: 'message_start', message } },
    { event: 'ping', data: { type: 'ping' } },
  ];
  // With thinking, the answer's block follows the thinking block.
  const index = turn.thinking === undefined ? 0 : 1;
  const thinking =
    turn.thinking === undefined
      ? []
      : [
          { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } } },
          { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: turn.thinking } } },
          { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'c2lnbmVk' } } },
          { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        ];
  const closing = (stopReason: string) => [
    { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } } },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
  const delta = (payload: Record<string, unknown>) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: payload } });

  if (turn.kind === 'text') {
    const cut = Math.floor(turn.text.length / 2);
    writeSse(response, [
      ...opening,
      ...thinking,
      { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } },
      delta({ type: 'text_delta', text: turn.text.slice(0, cut) }),
      delta({ type: 'text_delta', text: turn.text.slice(cut) }),
      ...closing('end_turn'),
    ]);
    return;
  }
  const input = JSON.stringify(turn.call.arguments);
  const cut = Math.floor(input.length / 2);
  writeSse(response, [
    ...opening,
    ...thinking,
    { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: ANTHROPIC_TOOL_USE_ID, name: turn.call.name, input: {} } } },
    delta({ type: 'input_json_delta', partial_json: input.slice(0, cut) }),
    delta({ type: 'input_json_delta', partial_json: input.slice(cut) }),
    ...closing('tool_use'),
  ]);
}

/**
 * Reads a Messages request (docs/wire-protocols.md §4.2): top-level `system`, `tool_use` blocks in
 * assistant turns, `tool_result` blocks in user turns, flat tools with `input_schema`.
 */
export function readAnthropicConversation(body: Record<string, unknown>): Conversation {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isRecord) : [];
  const blocks = (role: string, type: string) =>
    messages
      .filter((message) => message.role === role)
      .flatMap((message) => (Array.isArray(message.content) ? message.content.filter(isRecord) : []))
      .filter((block) => block.type === type);
  return {
    instructions: textOf(body.system),
    // textOf reads text blocks only, so tool results do not count as the user's words.
    userText: messages.filter((message) => message.role === 'user').map((message) => textOf(message.content)).join('\n'),
    calls: blocks('assistant', 'tool_use').map((block) => ({ id: block.id, name: block.name, arguments: block.input })),
    outputs: blocks('user', 'tool_result').map((block) => ({ callId: block.tool_use_id, text: textOf(block.content) })),
    tools: declaredTools(body.tools),
    reasoning: body.thinking,
  };
}

function declaredTools(tools: unknown): DeclaredTool[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool: unknown) => (isRecord(tool) && typeof tool.name === 'string' ? [{ name: tool.name, schema: tool.input_schema }] : []));
}
