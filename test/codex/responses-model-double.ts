/**
 * An OpenAI Responses upstream (`POST /v1/responses`, docs/wire-protocols.md §2) playing the scripted
 * model for pass-through routes: it reads the request exactly as Codex sent it (tools in `tools`
 * and in `additional_tools` input items, namespaces, hosted tools) and answers with the item types
 * OpenAI uses: `function_call`, or `custom_tool_call` with its `namespace` for code mode's `exec`,
 * after a reasoning item when the request asks for an effort; streamed when the request says
 * `stream: true`, else as one response object.
 */
import type { ServerResponse } from 'node:http';
import { startModelDouble, writeSse, type DoubleAddress, type ModelDouble } from './model-double-server.js';
import { parseArguments, scriptedTurn, type Conversation } from './model-script.js';
import { isRecord, textOf, type DeclaredTool } from './shell-call.js';

export const RESPONSES_CALL_ID = 'call_tollgate_responses_1';

/** At OpenAI's address with a bearer key, unless `at` says otherwise (e.g. `azureAddress`). */
export async function startResponsesModelDouble(upstreamKey: string, at?: DoubleAddress): Promise<ModelDouble> {
  return startModelDouble({
    path: '/v1/responses',
    authorized: (headers) => headers.authorization === `Bearer ${upstreamKey}`,
    ...at,
    answer,
  });
}

/** How this double seals its compaction items (an OpenAI upstream's own encryption, as far as the gateway can tell). */
const DOUBLE_SEAL = 'double-sealed:';

function answer(body: Record<string, unknown>, response: ServerResponse): void {
  const conversation = readResponsesConversation(body);
  const turn = scriptedTurn(conversation);
  const output: Array<Record<string, unknown>> = [];
  if (conversation.compactionTrigger === true && turn.kind === 'text') {
    // OpenAI's remote compaction: exactly one compaction item, its content readable only here.
    output.push({ id: 'cmp_double', type: 'compaction', encrypted_content: `${DOUBLE_SEAL}${Buffer.from(turn.text).toString('base64')}` });
    return respond(body, response, output);
  }
  if (turn.thinking !== undefined) output.push({ id: 'rs_double', type: 'reasoning', summary: [{ type: 'summary_text', text: turn.thinking }] });
  if (turn.kind === 'text') {
    output.push({ id: 'msg_double', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text, annotations: [] }] });
  } else if (turn.call.custom === true) {
    const namespace = turn.call.namespace === undefined ? {} : { namespace: turn.call.namespace };
    output.push({ id: 'ctc_double', type: 'custom_tool_call', status: 'completed', call_id: RESPONSES_CALL_ID, name: turn.call.name, ...namespace, input: String(turn.call.arguments.input) });
  } else {
    output.push({ id: 'fc_double', type: 'function_call', status: 'completed', call_id: RESPONSES_CALL_ID, name: turn.call.name, arguments: JSON.stringify(turn.call.arguments) });
  }
  respond(body, response, output);
}

function respond(body: Record<string, unknown>, response: ServerResponse, output: Array<Record<string, unknown>>): void {
  const created = { id: 'resp_double', object: 'response', created_at: 1767225600, status: 'in_progress', model: 'upstream-responses-model', output: [] };
  const completed = { ...created, status: 'completed', output, usage: { input_tokens: 900, output_tokens: 20, total_tokens: 920, output_tokens_details: { reasoning_tokens: 0 } } };
  if (body.stream !== true) {
    // A request without `stream` (a pass-through of a client's unstreamed call): the response object.
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(completed));
    return;
  }
  const events: Array<Record<string, unknown>> = [
    { type: 'response.created', response: created },
    ...output.flatMap((item, index) => [
      { type: 'response.output_item.added', output_index: index, item },
      { type: 'response.output_item.done', output_index: index, item },
    ]),
    { type: 'response.completed', response: completed },
  ];
  writeSse(response, events.map((event, index) => ({ event: String(event.type), data: { ...event, sequence_number: index } })));
}

/** Reads a Responses request as Codex sent it (§2.2, §2.3), namespaces and `additional_tools` included. */
export function readResponsesConversation(body: Record<string, unknown>): Conversation {
  const items = Array.isArray(body.input) ? body.input.filter(isRecord) : [];
  const messages = (...roles: string[]) => items.filter((item) => (item.type ?? 'message') === 'message' && typeof item.role === 'string' && roles.includes(item.role));
  const toolLists = [body.tools, ...items.filter((item) => item.type === 'additional_tools').map((item) => item.tools)];
  // This double's own compaction items, read back as the summary they hold.
  const summaries = items.filter((item) => item.type === 'compaction' && typeof item.encrypted_content === 'string' && item.encrypted_content.startsWith(DOUBLE_SEAL));
  return {
    instructions: [typeof body.instructions === 'string' ? body.instructions : '', ...messages('system', 'developer').map((item) => textOf(item.content))].join('\n'),
    userText: [...messages('user').map((item) => textOf(item.content)), ...summaries.map((item) => Buffer.from(String(item.encrypted_content).slice(DOUBLE_SEAL.length), 'base64').toString('utf8'))].join('\n'),
    compactionTrigger: items.at(-1)?.type === 'compaction_trigger',
    calls: items
      .filter((item) => item.type === 'function_call' || item.type === 'custom_tool_call')
      .map((item) => ({ id: item.call_id, name: item.name, namespace: item.namespace, arguments: item.type === 'function_call' ? parseArguments(item.arguments) : { input: item.input } })),
    outputs: items
      .filter((item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
      .map((item) => ({ callId: item.call_id, text: textOf(item.output) })),
    tools: toolLists.flatMap((list) => declaredTools(list, undefined)),
    reasoning: isRecord(body.reasoning) ? body.reasoning.effort : undefined,
  };
}

function declaredTools(list: unknown, namespace: string | undefined): DeclaredTool[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isRecord).flatMap((tool): DeclaredTool[] => {
    if (tool.type === 'namespace' && typeof tool.name === 'string') return declaredTools(tool.tools, tool.name);
    if (typeof tool.name !== 'string' || (tool.type !== 'function' && tool.type !== 'custom')) return [];
    const declared: DeclaredTool = { name: tool.name, schema: tool.parameters, custom: tool.type === 'custom' };
    if (namespace !== undefined) declared.namespace = namespace;
    return [declared];
  });
}
