/**
 * A chat-only OpenAI-compatible upstream (`POST /v1/chat/completions`, docs/wire-protocols.md §1) playing
 * the scripted model: tool calls stream the way OpenAI sends them (the id and name first, then the
 * arguments in fragments), and a request with `reasoning_effort` gets its reasoning as
 * `reasoning_content` deltas first, as reasoning servers compatible with OpenAI send it.
 */
import type { ServerResponse } from 'node:http';
import { startModelDouble, writeSse, type DoubleAddress, type ModelDouble } from './model-double-server.js';
import { parseArguments, scriptedTurn, type Conversation } from './model-script.js';
import { isRecord, textOf, type DeclaredTool } from './shell-call.js';

export const CHAT_CALL_ID = 'call_tollgate_shell_1';

/** At OpenAI's address with a bearer key, unless `at` says otherwise (e.g. `azureAddress`). */
export async function startChatModelDouble(upstreamKey: string, at?: DoubleAddress): Promise<ModelDouble> {
  return startModelDouble({
    path: '/v1/chat/completions',
    authorized: (headers) => headers.authorization === `Bearer ${upstreamKey}`,
    ...at,
    answer,
  });
}

function answer(body: Record<string, unknown>, response: ServerResponse): void {
  const turn = scriptedTurn(readChatConversation(body));
  const base = { id: 'chatcmpl-double', object: 'chat.completion.chunk', created: 1767225600, model: String(body.model) };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
  });
  const usage = { ...base, choices: [], usage: { prompt_tokens: 900, completion_tokens: 20, total_tokens: 920 } };
  const thinking = turn.thinking === undefined ? [] : [{ data: chunk({ role: 'assistant', content: null, reasoning_content: turn.thinking }) }];

  if (turn.kind === 'text') {
    const cut = Math.floor(turn.text.length / 2);
    writeSse(response, [
      ...thinking,
      { data: chunk({ role: 'assistant', content: '' }) },
      { data: chunk({ content: turn.text.slice(0, cut) }) },
      { data: chunk({ content: turn.text.slice(cut) }) },
      { data: chunk({}, 'stop') },
      { data: usage },
      { data: '[DONE]' },
    ]);
    return;
  }
  const argumentsText = JSON.stringify(turn.call.arguments);
  const cut = Math.floor(argumentsText.length / 2);
  writeSse(response, [
    ...thinking,
    { data: chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: CHAT_CALL_ID, type: 'function', function: { name: turn.call.name, arguments: '' } }] }) },
    { data: chunk({ tool_calls: [{ index: 0, function: { arguments: argumentsText.slice(0, cut) } }] }) },
    { data: chunk({ tool_calls: [{ index: 0, function: { arguments: argumentsText.slice(cut) } }] }) },
    { data: chunk({}, 'tool_calls') },
    { data: usage },
    { data: '[DONE]' },
  ]);
}

/** Reads a Chat Completions request (docs/wire-protocols.md §1.2: nested tools, `tool` messages). */
export function readChatConversation(body: Record<string, unknown>): Conversation {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isRecord) : [];
  const withRole = (...roles: string[]) => messages.filter((message) => typeof message.role === 'string' && roles.includes(message.role));
  return {
    instructions: withRole('system', 'developer').map((message) => textOf(message.content)).join('\n'),
    userText: withRole('user').map((message) => textOf(message.content)).join('\n'),
    calls: withRole('assistant')
      .flatMap((message) => (Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : []))
      .map((call) => {
        const fn = isRecord(call.function) ? call.function : {};
        return { id: call.id, name: fn.name, arguments: parseArguments(fn.arguments) };
      }),
    outputs: withRole('tool').map((message) => ({ callId: message.tool_call_id, text: textOf(message.content) })),
    tools: declaredTools(body.tools),
    reasoning: body.reasoning_effort,
  };
}

function declaredTools(tools: unknown): DeclaredTool[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool: unknown) =>
    isRecord(tool) && isRecord(tool.function) && typeof tool.function.name === 'string'
      ? [{ name: tool.function.name, schema: tool.function.parameters }]
      : [],
  );
}
