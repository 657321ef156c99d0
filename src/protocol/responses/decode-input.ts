/**
 * Decodes the Responses `input` field (a string, or a list of items) into canonical input items.
 * Item shapes: https://platform.openai.com/docs/api-reference/responses/create#responses-create-input
 * (summarised in docs/wire-protocols.md §2.2).
 *
 * Fields we do not act on inside an item (`id`, `status`, `annotations`, `phase`, …) are ignored
 * rather than rejected: clients replay earlier output items as input, and those carry whatever the
 * newest server added to them.
 */
import type { ContentPart, InputItem, MessageRole, OpaqueInputItem } from '../canonical.js';
import {
  emptyArray,
  invalidType,
  isRecord,
  missingParameter,
  optionalEnum,
  unsupportedValue,
  type JsonRecord,
} from '../field-checks.js';
import { callName, decodeCustomToolCall } from './custom-tools.js';
import { requireEnum, requireNonEmptyString, requireString } from './required-fields.js';

const ROLES: readonly MessageRole[] = ['user', 'assistant', 'system', 'developer'];
const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output', 'reasoning'] as const;
const INPUT_PART_TYPES = ['input_text', 'input_image'] as const;
const ASSISTANT_PART_TYPES = ['output_text', 'refusal'] as const;
const IMAGE_DETAILS = ['auto', 'low', 'high'] as const;
const OUTPUT_PART_TYPES = ['input_text', 'input_image', 'input_file'] as const;
const ITEM_STATUSES = ['in_progress', 'completed', 'incomplete'] as const;
const COMPACTION_TRIGGER = 'compaction_trigger';

/** What `input` holds besides the canonical items. */
export interface DecodedInput {
  items: InputItem[];
  /** Items kept as they came, for Responses upstreams only (see {@link OpaqueInputItem}). */
  opaque: OpaqueInputItem[];
  /** The tool lists of `additional_tools` items, with their paths, merged into `tools` by the caller. */
  toolLists: Array<{ tools: unknown[]; path: string }>;
  /** The input ended with `{"type": "compaction_trigger"}`: the answer is a compaction (compaction.ts). */
  compactionTrigger: boolean;
}

/** Decodes `input`; `reasoning` items are accepted and dropped (no canonical slot for them). */
export function decodeInput(value: unknown): InputItem[] {
  return decodeInputItems(value).items;
}

/**
 * Decodes `input`. Items of a type the gateway has no use for (hosted-tool calls, compaction,
 * types newer than this code) are not refused: a Responses upstream may well accept them, so they
 * are kept as they came, and translated routes leave them out. A `compaction` item must carry its
 * `encrypted_content`; a `compaction_trigger` may only be the last item (docs/wire-protocols.md
 * §23).
 */
export function decodeInputItems(value: unknown): DecodedInput {
  if (value === undefined || value === null) throw missingParameter('input');
  if (typeof value === 'string') {
    return { items: [{ type: 'message', role: 'user', content: [{ type: 'text', text: value }] }], opaque: [], toolLists: [], compactionTrigger: false };
  }
  if (!Array.isArray(value)) throw invalidType('input', 'a string or an array of input items', value);
  if (value.length === 0) throw emptyArray('input');
  const decoded: DecodedInput = { items: [], opaque: [], toolLists: [], compactionTrigger: false };
  value.forEach((raw: unknown, index) => {
    const path = `input[${index}]`;
    if (!isRecord(raw)) throw invalidType(path, 'an object', raw);
    // `type` is optional on messages: an item with a role and no type is a message.
    const type = raw.type === undefined ? 'message' : raw.type;
    if (typeof type !== 'string') throw invalidType(`${path}.type`, 'a string', type);
    if (type === 'additional_tools') {
      decoded.toolLists.push({ tools: requireArray(raw.tools, `${path}.tools`), path: `${path}.tools` });
      return;
    }
    if (type === COMPACTION_TRIGGER) {
      if (index !== value.length - 1) throw unsupportedValue(path, "A 'compaction_trigger' item must be the last item of 'input'.");
      decoded.compactionTrigger = true;
      return;
    }
    if (type === 'compaction') requireString(raw.encrypted_content, `${path}.encrypted_content`);
    if (!(ITEM_TYPES as readonly string[]).includes(type)) {
      decoded.opaque.push({ index: decoded.items.length, raw });
      return;
    }
    const item = decodeItem(raw, type, path);
    if (item !== undefined) decoded.items.push(item);
  });
  return decoded;
}

function requireArray(value: unknown, param: string): unknown[] {
  if (value === undefined || value === null) throw missingParameter(param);
  if (!Array.isArray(value)) throw invalidType(param, 'an array', value);
  return value;
}

function decodeItem(raw: JsonRecord, type: string, path: string): InputItem | undefined {
  switch (type) {
    case 'message':
      return decodeMessage(raw, path);
    case 'function_call':
      return decodeFunctionCall(raw, path);
    case 'function_call_output':
      return decodeFunctionCallOutput(raw, path);
    case 'custom_tool_call':
      return decodeCustomToolCall(raw, path);
    case 'custom_tool_call_output':
      // Its output has the same shape as a function call's; the call itself says it was custom.
      return decodeFunctionCallOutput(raw, path);
    default:
      // reasoning: no canonical slot.
      return undefined;
  }
}

function decodeMessage(raw: JsonRecord, path: string): InputItem {
  const role = requireEnum(raw.role, `${path}.role`, ROLES);
  optionalEnum(raw.status, `${path}.status`, ITEM_STATUSES);
  const content = raw.content;
  if (content === undefined) throw missingParameter(`${path}.content`);
  if (typeof content === 'string') return { type: 'message', role, content: [{ type: 'text', text: content }] };
  if (!Array.isArray(content)) throw invalidType(`${path}.content`, 'a string or an array of content parts', content);
  const parts = content.map((part: unknown, index) => decodePart(part, role, `${path}.content[${index}]`));
  return { type: 'message', role, content: parts };
}

/** OpenAI only takes output parts in assistant messages and input parts in the others. */
function decodePart(raw: unknown, role: MessageRole, path: string): ContentPart {
  if (!isRecord(raw)) throw invalidType(path, 'an object', raw);
  const supported: readonly string[] = role === 'assistant' ? ASSISTANT_PART_TYPES : INPUT_PART_TYPES;
  const type = requireEnum(raw.type, `${path}.type`, supported);
  switch (type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: requireString(raw.text, `${path}.text`) };
    case 'refusal':
      return { type: 'refusal', refusal: requireString(raw.refusal, `${path}.refusal`) };
    default:
      // The only type left in either list is input_image.
      return decodeImage(raw, path);
  }
}

function decodeImage(raw: JsonRecord, path: string): ContentPart {
  const detail = optionalEnum(raw.detail, `${path}.detail`, IMAGE_DETAILS);
  if (raw.image_url === undefined || raw.image_url === null) {
    // Tollgate keeps no file store, so an image can only arrive as a URL (or a data: URL).
    if (raw.file_id !== undefined && raw.file_id !== null) {
      throw unsupportedValue(
        `${path}.file_id`,
        "Images given by 'file_id' are not supported; send the image as 'image_url' (a URL or a data URL).",
      );
    }
    throw missingParameter(`${path}.image_url`);
  }
  const url = requireNonEmptyString(raw.image_url, `${path}.image_url`);
  return detail === undefined ? { type: 'image', url } : { type: 'image', url, detail };
}

function decodeFunctionCall(raw: JsonRecord, path: string): InputItem {
  const callId = requireNonEmptyString(raw.call_id, `${path}.call_id`);
  const name = callName(raw, path);
  const argumentsText = requireString(raw.arguments, `${path}.arguments`);
  if (raw.id !== undefined && raw.id !== null) requireString(raw.id, `${path}.id`);
  optionalEnum(raw.status, `${path}.status`, ITEM_STATUSES);
  return { type: 'function_call', callId, name, arguments: argumentsText };
}

/**
 * A call_id that answers no earlier function_call is not an error here: with `previous_response_id`
 * the call may sit in the stored response, which only the caller can resolve.
 */
function decodeFunctionCallOutput(raw: JsonRecord, path: string): InputItem {
  const callId = requireNonEmptyString(raw.call_id, `${path}.call_id`);
  const output = raw.output;
  if (output === undefined) throw missingParameter(`${path}.output`);
  if (typeof output === 'string') return { type: 'function_call_output', callId, output };
  if (!Array.isArray(output)) throw invalidType(`${path}.output`, 'a string or an array of content parts', output);
  // The canonical output is text: text parts are joined in order, and an image or file (Codex's
  // `view_image` answers with one) is named in its place. A Responses upstream gets the parts as sent.
  const texts = output.map((part: unknown, index) => {
    const partPath = `${path}.output[${index}]`;
    if (!isRecord(part)) throw invalidType(partPath, 'an object', part);
    const type = requireEnum(part.type, `${partPath}.type`, OUTPUT_PART_TYPES);
    if (type === 'input_text') return requireString(part.text, `${partPath}.text`);
    return type === 'input_image' ? '[image not shown]' : '[file not shown]';
  });
  return { type: 'function_call_output', callId, output: texts.join('') };
}
