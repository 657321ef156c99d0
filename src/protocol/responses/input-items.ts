/**
 * Conversation items in the Responses input-item form that `GET /v1/responses/{id}/input_items`
 * lists and `previous_response_id` replays: every item carries an `id`, as OpenAI's stored items do.
 * https://platform.openai.com/docs/api-reference/responses/input-items (docs/wire-protocols.md §2.2, §2.6)
 *
 * Two sources: the canonical input of a new request (encoded here with fresh ids), and the output
 * items of a stored response (kept with their own `msg_`/`fc_` ids and call ids, so a later
 * `function_call_output` still joins its call). Both come out as items `decodeInput` accepts, so a
 * stored conversation decodes back into canonical input like any client's.
 */
import type { ContentPart, InputItem } from '../canonical.js';
import { randomItemId } from './encoder.js';

/** The prefix of a new item id. */
export type InputItemIdPrefix = 'msg' | 'fc' | 'fco';

export type ResponsesInputItem = Record<string, unknown>;

/**
 * Canonical input → Responses input items with new ids (`msg_` messages, `fc_` calls, `fco_` call
 * outputs). Call ids are kept: they join a call to its output across turns.
 */
export function encodeInputItems(
  items: readonly InputItem[],
  newId: (prefix: InputItemIdPrefix) => string = randomItemId,
): ResponsesInputItem[] {
  return items.map((item) => {
    switch (item.type) {
      case 'message':
        return {
          id: newId('msg'),
          type: 'message',
          role: item.role,
          status: 'completed',
          content: item.role === 'assistant' ? item.content.flatMap(assistantPart) : item.content.map(inputPart),
        };
      case 'function_call':
        return { id: newId('fc'), type: 'function_call', status: 'completed', arguments: item.arguments, call_id: item.callId, name: item.name };
      case 'function_call_output':
        return { id: newId('fco'), type: 'function_call_output', status: 'completed', call_id: item.callId, output: item.output };
    }
  });
}

/** User, system and developer messages take input parts; a refusal can only be carried as text. */
function inputPart(part: ContentPart): Record<string, unknown> {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: part.text };
    case 'image':
      return { type: 'input_image', image_url: part.url, detail: part.detail ?? 'auto' };
    case 'refusal':
      return { type: 'input_text', text: part.refusal };
  }
}

/** Assistant messages take output parts only; an image has no output form and is left out. */
function assistantPart(part: ContentPart): Array<Record<string, unknown>> {
  switch (part.type) {
    case 'text':
      return [{ type: 'output_text', text: part.text, annotations: [] }];
    case 'refusal':
      return [{ type: 'refusal', refusal: part.refusal }];
    case 'image':
      return [];
  }
}

/**
 * The output of a stored response (`response.output`, read back from storage as `unknown`) as input
 * items for the next turn: assistant messages and function calls keep their ids; reasoning items
 * keep their summary (Chat upstreams drop them, Responses ones may use them). Items that cannot be
 * replayed (hosted-tool calls, anything malformed) are left out rather than failing the next turn.
 */
export function outputItemsAsInputItems(output: unknown): ResponsesInputItem[] {
  if (!Array.isArray(output)) return [];
  const items: ResponsesInputItem[] = [];
  for (const item of output) {
    const replayed = replayable(item);
    if (replayed !== undefined) items.push(replayed);
  }
  return items;
}

function replayable(item: unknown): ResponsesInputItem | undefined {
  if (!isObject(item) || typeof item.id !== 'string' || item.id === '') return undefined;
  const status = replayStatus(item.status);
  switch (item.type) {
    case 'message': {
      if (item.role !== 'assistant' || !Array.isArray(item.content)) return undefined;
      const content = item.content.flatMap(outputPart);
      return { id: item.id, type: 'message', role: 'assistant', status, content };
    }
    case 'function_call': {
      const { call_id: callId, name, arguments: argumentsText } = item;
      if (typeof callId !== 'string' || callId === '' || typeof name !== 'string' || name === '' || typeof argumentsText !== 'string') return undefined;
      return { id: item.id, type: 'function_call', status, arguments: argumentsText, call_id: callId, name, ...namespaceOf(item) };
    }
    case 'custom_tool_call': {
      const { call_id: callId, name, input } = item;
      if (typeof callId !== 'string' || callId === '' || typeof name !== 'string' || name === '' || typeof input !== 'string') return undefined;
      return { id: item.id, type: 'custom_tool_call', status, call_id: callId, name, ...namespaceOf(item), input };
    }
    case 'reasoning': {
      const summary = Array.isArray(item.summary) ? item.summary.filter(isSummaryPart) : [];
      const reasoning: ResponsesInputItem = { id: item.id, type: 'reasoning', summary };
      if (typeof item.encrypted_content === 'string') reasoning.encrypted_content = item.encrypted_content;
      return reasoning;
    }
    default:
      return undefined;
  }
}

/** A call to a namespaced tool keeps its namespace, which names the tool together with `name`. */
function namespaceOf(item: Record<string, unknown>): Record<string, string> {
  return typeof item.namespace === 'string' && item.namespace !== '' ? { namespace: item.namespace } : {};
}

function outputPart(part: unknown): Array<Record<string, unknown>> {
  if (!isObject(part)) return [];
  if (part.type === 'output_text' && typeof part.text === 'string') {
    return [{ type: 'output_text', text: part.text, annotations: Array.isArray(part.annotations) ? part.annotations : [] }];
  }
  if (part.type === 'refusal' && typeof part.refusal === 'string') return [{ type: 'refusal', refusal: part.refusal }];
  return [];
}

/** A failed response's partial items are `incomplete`; anything unreadable is taken as completed. */
function replayStatus(status: unknown): 'completed' | 'incomplete' {
  return status === 'incomplete' ? 'incomplete' : 'completed';
}

function isSummaryPart(part: unknown): part is Record<string, unknown> {
  return isObject(part) && part.type === 'summary_text' && typeof part.text === 'string';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
