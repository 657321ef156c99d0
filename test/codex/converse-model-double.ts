/**
 * A Bedrock Converse upstream (`POST /model/{modelId}/converse-stream`, docs/wire-protocols.md
 * §18.3–18.4) playing the scripted model at a Bedrock address (bedrock-address.ts: SigV4, AWS's
 * event stream): a call is a `contentBlockStart` naming the `toolUse` and its input in two
 * `contentBlockDelta`s; a request with Claude's `thinking` in `additionalModelRequestFields` gets
 * `reasoningContent` deltas (text, then a signature) first. Usage comes in the closing `metadata`.
 */
import type { ServerResponse } from 'node:http';
import type { BedrockAddress } from './bedrock-address.js';
import { startModelDouble, type ModelDouble, type SseEvent } from './model-double-server.js';
import { scriptedTurn, type Conversation } from './model-script.js';
import { isRecord, textOf, type DeclaredTool } from './shell-call.js';

export const CONVERSE_TOOL_USE_ID = 'tooluse_tollgate_shell_1';

export async function startConverseModelDouble(at: BedrockAddress): Promise<ModelDouble> {
  return startModelDouble({
    ...at,
    answer: (body, response, path) => {
      if (at.refuses(body, response)) return;
      if (!at.streams(path)) throw new Error('expected a ConverseStream request');
      answer(body, response, at.writeStream);
    },
  });
}

function answer(body: Record<string, unknown>, response: ServerResponse, writeStream: BedrockAddress['writeStream']): void {
  const turn = scriptedTurn(readConverseConversation(body));
  const event = (name: string, data: Record<string, unknown>): SseEvent => ({ event: name, data });
  const events: SseEvent[] = [event('messageStart', { role: 'assistant' })];
  let index = 0;
  if (turn.thinking !== undefined) {
    events.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: turn.thinking } } }));
    events.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature: 'c2lnbmVk' } } }));
    events.push(event('contentBlockStop', { contentBlockIndex: index }));
    index += 1;
  }
  if (turn.kind === 'text') {
    const cut = Math.floor(turn.text.length / 2);
    events.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { text: turn.text.slice(0, cut) } }));
    events.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { text: turn.text.slice(cut) } }));
  } else {
    const input = JSON.stringify(turn.call.arguments);
    const cut = Math.floor(input.length / 2);
    events.push(event('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: CONVERSE_TOOL_USE_ID, name: turn.call.name } } }));
    events.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: input.slice(0, cut) } } }));
    events.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: input.slice(cut) } } }));
  }
  events.push(event('contentBlockStop', { contentBlockIndex: index }));
  events.push(event('messageStop', { stopReason: turn.kind === 'call' ? 'tool_use' : 'end_turn' }));
  events.push(event('metadata', { usage: { inputTokens: 900, outputTokens: 20, totalTokens: 920 }, metrics: { latencyMs: 321 } }));
  writeStream(response, events);
}

/**
 * Reads a Converse request (§18.3): `system` text blocks, `toolUse` blocks in assistant turns,
 * `toolResult` blocks in user turns, tools as `toolConfig.tools[].toolSpec`.
 */
export function readConverseConversation(body: Record<string, unknown>): Conversation {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isRecord) : [];
  const blocks = (role: string, kind: 'toolUse' | 'toolResult') =>
    messages
      .filter((message) => message.role === role)
      .flatMap((message) => (Array.isArray(message.content) ? message.content.filter(isRecord) : []))
      .map((block) => block[kind])
      .filter(isRecord);
  const extra = isRecord(body.additionalModelRequestFields) ? body.additionalModelRequestFields : {};
  return {
    instructions: textOf(body.system),
    // textOf reads text blocks only, so tool results do not count as the user's words.
    userText: messages.filter((message) => message.role === 'user').map((message) => textOf(message.content)).join('\n'),
    calls: blocks('assistant', 'toolUse').map((use) => ({ id: use.toolUseId, name: use.name, arguments: use.input })),
    outputs: blocks('user', 'toolResult').map((result) => ({ callId: result.toolUseId, text: textOf(result.content) })),
    tools: declaredTools(body.toolConfig),
    reasoning: extra.thinking,
  };
}

function declaredTools(config: unknown): DeclaredTool[] {
  if (!isRecord(config) || !Array.isArray(config.tools)) return [];
  return config.tools
    .filter(isRecord)
    .map((tool) => tool.toolSpec)
    .filter(isRecord)
    .flatMap((spec) => (typeof spec.name === 'string' ? [{ name: spec.name, schema: isRecord(spec.inputSchema) ? spec.inputSchema.json : undefined }] : []));
}
