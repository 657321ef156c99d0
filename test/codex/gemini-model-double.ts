/**
 * A Gemini upstream (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`, docs/wire-protocols.md
 * §5) playing the scripted model: a call is one `functionCall` part (with its id and a thought
 * signature, as Gemini 3 sends them), and a request with a `thinkingConfig` gets a thought part
 * first. Usage comes with every chunk, as Gemini sends it. At the Gemini API's address with its key,
 * unless `at` says otherwise (e.g. `vertexAddress`, a Vertex AI publisher model, §19.4).
 */
import type { ServerResponse } from 'node:http';
import { startModelDouble, writeSse, type DoubleAddress, type ModelDouble } from './model-double-server.js';
import { scriptedTurn, type Conversation } from './model-script.js';
import { isRecord, textOf, type DeclaredTool } from './shell-call.js';

export const GEMINI_CALL_ID = 'gemini_call_shell_1';

export async function startGeminiModelDouble(upstreamKey: string, at?: DoubleAddress): Promise<ModelDouble> {
  return startModelDouble({
    path: /^\/v1\/models\/[^/]+:streamGenerateContent\?alt=sse$/,
    authorized: (headers) => headers['x-goog-api-key'] === upstreamKey,
    ...at,
    answer,
  });
}

function answer(body: Record<string, unknown>, response: ServerResponse): void {
  const turn = scriptedTurn(readGeminiConversation(body));
  const usageMetadata = { promptTokenCount: 900, candidatesTokenCount: 20, totalTokenCount: 920, ...(turn.thinking === undefined ? {} : { thoughtsTokenCount: 6 }) };
  const chunk = (parts: unknown[], finishReason?: string) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason === undefined ? {} : { finishReason }) }],
    usageMetadata,
    modelVersion: 'gemini-double',
    responseId: 'gemini-double-response',
  });
  const thinking = turn.thinking === undefined ? [] : [{ data: chunk([{ text: turn.thinking, thought: true }]) }];
  if (turn.kind === 'text') {
    const cut = Math.floor(turn.text.length / 2);
    writeSse(response, [...thinking, { data: chunk([{ text: turn.text.slice(0, cut) }]) }, { data: chunk([{ text: turn.text.slice(cut) }], 'STOP') }]);
    return;
  }
  const functionCall = { name: turn.call.name, args: turn.call.arguments, id: GEMINI_CALL_ID };
  writeSse(response, [...thinking, { data: chunk([{ functionCall, thoughtSignature: 'c2lnbmVkLWNhbGw=' }], 'STOP') }]);
}

/** Reads a generateContent request (§5.2): `systemInstruction`, `functionCall`/`functionResponse` parts. */
export function readGeminiConversation(body: Record<string, unknown>): Conversation {
  const contents = Array.isArray(body.contents) ? body.contents.filter(isRecord) : [];
  const parts = (role: string) =>
    contents.filter((content) => content.role === role).flatMap((content) => (Array.isArray(content.parts) ? content.parts.filter(isRecord) : []));
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  return {
    instructions: isRecord(body.systemInstruction) ? textOf(body.systemInstruction.parts) : '',
    userText: textOf(parts('user').filter((part) => typeof part.text === 'string')),
    calls: parts('model')
      .map((part) => part.functionCall)
      .filter(isRecord)
      .map((call) => ({ id: call.id, name: call.name, arguments: call.args })),
    outputs: parts('user')
      .map((part) => part.functionResponse)
      .filter(isRecord)
      .map((output) => ({ callId: output.id, text: isRecord(output.response) ? String(output.response.result) : '' })),
    tools: declaredTools(body.tools),
    reasoning: config.thinkingConfig,
  };
}

function declaredTools(tools: unknown): DeclaredTool[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter(isRecord)
    .flatMap((tool) => (Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations.filter(isRecord) : []))
    .flatMap((declaration) => (typeof declaration.name === 'string' ? [{ name: declaration.name, schema: declaration.parameters ?? declaration.parametersJsonSchema }] : []));
}
