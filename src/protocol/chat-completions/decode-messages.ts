/**
 * Chat Completions `messages` → canonical input items.
 * Wire format: docs/wire-protocols.md §1.2; https://platform.openai.com/docs/api-reference/chat/create
 *
 * | Chat message                          | Canonical items                                              |
 * |---------------------------------------|--------------------------------------------------------------|
 * | system / developer / user             | `message` with the same role                                 |
 * | assistant (text, refusal)             | `message` role assistant (left out when it has no content)   |
 * | assistant `tool_calls[]`              | one `function_call` per call, after the assistant's message  |
 * | tool                                  | `function_call_output` (text parts joined)                   |
 * | function (deprecated)                 | rejected                                                     |
 */
import { clipEcho } from '../client-echo.js';
import { InvalidRequestError, type ContentPart, type InputItem } from '../canonical.js';
import {
  emptyArray,
  emptyString,
  invalidType,
  invalidValue,
  missingParameter,
  optionalArray,
  optionalEnum,
  optionalString,
  recordAt,
  unsupportedValue,
  type JsonRecord,
} from '../field-checks.js';
import { requireRecord, requireString } from './required-fields.js';

const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'] as const;
const USER_PART_TYPES = ['text', 'image_url', 'input_audio', 'file'] as const;
const ASSISTANT_PART_TYPES = ['text', 'refusal'] as const;
const IMAGE_DETAILS = ['auto', 'low', 'high'] as const;
const STRING_OR_PARTS = 'one of a string or array of objects';

/** Tool calls of assistant messages still waiting for their `tool` answers. */
interface PendingToolCalls {
  assistantIndex: number;
  callIds: Set<string>;
}

/** Decodes and validates `messages`; `messages` must already be known to be an array. */
export function decodeMessages(messages: readonly unknown[]): InputItem[] {
  if (messages.length === 0) {
    throw new InvalidRequestError("'messages' must contain at least one message.", 'messages', 'empty_array');
  }
  const items: InputItem[] = [];
  // Every call id an assistant message in this request has made, so a `tool` message can be checked.
  const knownCallIds = new Set<string>();
  let pending: PendingToolCalls | undefined;

  for (let index = 0; index < messages.length; index += 1) {
    const param = `messages[${index}]`;
    const message = recordAt(messages, index, 'messages');
    const role = requireString(message.role, `${param}.role`);
    if (!(ROLES as readonly string[]).includes(role)) throw invalidValue(`${param}.role`, role, ROLES);
    optionalString(message.name, `${param}.name`);

    if (role !== 'tool' && pending !== undefined) throw unansweredToolCalls(pending);

    switch (role) {
      case 'system':
      case 'developer':
        items.push({ type: 'message', role, content: decodeTextContent(message, param) });
        break;
      case 'user':
        items.push({ type: 'message', role: 'user', content: decodeUserContent(message, param) });
        break;
      case 'assistant': {
        const calls = decodeAssistant(message, param, items);
        for (const call of calls) knownCallIds.add(call);
        if (calls.length > 0) pending = { assistantIndex: index, callIds: new Set(calls) };
        break;
      }
      case 'tool': {
        const callId = requireString(message.tool_call_id, `${param}.tool_call_id`);
        const output = joinText(decodeTextContent(message, param));
        if (!knownCallIds.has(callId)) {
          throw new InvalidRequestError(
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
            `${param}.role`,
            'invalid_value',
          );
        }
        pending?.callIds.delete(callId);
        if (pending?.callIds.size === 0) pending = undefined;
        items.push({ type: 'function_call_output', callId, output });
        break;
      }
      default:
        // Only 'function' is left: the deprecated predecessor of 'tool'.
        throw unsupportedValue(
          `${param}.role`,
          "Unsupported value: messages with role 'function' are deprecated and not supported; use 'tool_calls' and role 'tool' instead.",
        );
    }
  }
  if (pending !== undefined) throw unansweredToolCalls(pending);
  return items;
}

/**
 * OpenAI refuses a conversation whose tool calls are not all answered before the next turn, and
 * upstreams translated from it (Anthropic `tool_use`) refuse it too; catching it here gives the
 * client OpenAI's wording instead of an upstream's.
 */
function unansweredToolCalls(pending: PendingToolCalls): InvalidRequestError {
  return new InvalidRequestError(
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
      `The following tool_call_ids did not have response messages: ${clipEcho([...pending.callIds].join(', '))}`,
    `messages[${pending.assistantIndex}].role`,
    'invalid_value',
  );
}

function joinText(parts: readonly ContentPart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** Reads `content` as a string or a non-empty array of objects, the common first step for every role. */
function readContent(message: JsonRecord, param: string): string | JsonRecord[] {
  const content = message.content;
  if (content === undefined || content === null) throw missingParameter(`${param}.content`);
  return contentAsStringOrParts(content, `${param}.content`);
}

function contentAsStringOrParts(content: unknown, param: string): string | JsonRecord[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidType(param, STRING_OR_PARTS, content);
  if (content.length === 0) throw emptyArray(param);
  return content.map((_, index) => recordAt(content, index, param));
}

function partType(part: JsonRecord, param: string, allowed: readonly string[]): string {
  const type = requireString(part.type, `${param}.type`);
  if (!allowed.includes(type)) throw invalidValue(`${param}.type`, type, allowed);
  return type;
}

/** system, developer and tool messages: a string or text parts only. */
function decodeTextContent(message: JsonRecord, param: string): ContentPart[] {
  const content = readContent(message, param);
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part, index) => {
    const partParam = `${param}.content[${index}]`;
    partType(part, partParam, ['text']);
    return { type: 'text', text: requireString(part.text, `${partParam}.text`) };
  });
}

function decodeUserContent(message: JsonRecord, param: string): ContentPart[] {
  const content = readContent(message, param);
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part, index) => decodeUserPart(part, `${param}.content[${index}]`));
}

function decodeUserPart(part: JsonRecord, param: string): ContentPart {
  const type = partType(part, param, USER_PART_TYPES);
  if (type === 'text') return { type: 'text', text: requireString(part.text, `${param}.text`) };
  if (type === 'image_url') {
    const image = requireRecord(part.image_url, `${param}.image_url`);
    const url = requireString(image.url, `${param}.image_url.url`);
    if (url === '') throw emptyString(`${param}.image_url.url`);
    if (!/^(https?:|data:)/i.test(url)) {
      throw new InvalidRequestError(
        `Invalid '${param}.image_url.url': expected an http(s) URL or a data: URL.`,
        `${param}.image_url.url`,
        'invalid_value',
      );
    }
    const detail = optionalEnum(image.detail, `${param}.image_url.detail`, IMAGE_DETAILS);
    return detail === undefined ? { type: 'image', url } : { type: 'image', url, detail };
  }
  // input_audio and file: OpenAI knows them, but the canonical model carries neither.
  throw new InvalidRequestError(
    `Content parts of type '${type}' are not supported on /v1/chat/completions.`,
    `${param}.type`,
    'unsupported_content',
  );
}

/**
 * Pushes the assistant's text (when it has any) and its tool calls onto `items`, and returns the
 * call ids it made.
 */
function decodeAssistant(message: JsonRecord, param: string, items: InputItem[]): string[] {
  if (message.audio !== undefined && message.audio !== null) {
    throw new InvalidRequestError(
      'Assistant audio is not supported on /v1/chat/completions.',
      `${param}.audio`,
      'unsupported_content',
    );
  }
  const toolCalls = optionalArray(message.tool_calls, `${param}.tool_calls`) ?? [];
  const calls = toolCalls.map((_, index) => decodeToolCall(toolCalls, index, `${param}.tool_calls`));
  const refusal = optionalString(message.refusal, `${param}.refusal`);

  const parts: ContentPart[] = [];
  const content = message.content;
  if (content === undefined || content === null) {
    if (calls.length === 0 && refusal === undefined) {
      throw new InvalidRequestError(
        `Invalid value for '${param}.content': expected a string or array of objects when 'tool_calls' is absent, but got ${content === null ? 'null' : 'nothing'} instead.`,
        `${param}.content`,
        'invalid_value',
      );
    }
  } else {
    const decoded = contentAsStringOrParts(content, `${param}.content`);
    if (typeof decoded === 'string') parts.push({ type: 'text', text: decoded });
    else decoded.forEach((part, index) => parts.push(decodeAssistantPart(part, `${param}.content[${index}]`)));
  }
  if (refusal !== undefined && refusal !== '') parts.push({ type: 'refusal', refusal });

  // Empty text carries nothing, and some upstreams (Anthropic) reject empty text blocks.
  const kept = parts.filter((part) => !(part.type === 'text' && part.text === ''));
  if (kept.length > 0) items.push({ type: 'message', role: 'assistant', content: kept });
  for (const call of calls) items.push(call);
  return calls.map((call) => call.callId);
}

function decodeAssistantPart(part: JsonRecord, param: string): ContentPart {
  const type = partType(part, param, ASSISTANT_PART_TYPES);
  if (type === 'text') return { type: 'text', text: requireString(part.text, `${param}.text`) };
  return { type: 'refusal', refusal: requireString(part.refusal, `${param}.refusal`) };
}

type FunctionCallItem = Extract<InputItem, { type: 'function_call' }>;

function decodeToolCall(toolCalls: readonly unknown[], index: number, listParam: string): FunctionCallItem {
  const param = `${listParam}[${index}]`;
  const call = recordAt(toolCalls, index, listParam);
  const id = requireString(call.id, `${param}.id`);
  const type = requireString(call.type, `${param}.type`);
  if (type === 'custom') {
    throw new InvalidRequestError('Custom tool calls are not supported on this gateway; use function tools.', `${param}.type`, 'unsupported_tool');
  }
  if (type !== 'function') throw invalidValue(`${param}.type`, type, ['function', 'custom']);
  const fn = requireRecord(call.function, `${param}.function`);
  const name = requireString(fn.name, `${param}.function.name`);
  // Arguments are the model's own JSON text and may be invalid; they are passed on as a string.
  const argumentsText = requireString(fn.arguments, `${param}.function.arguments`);
  return { type: 'function_call', callId: id, name, arguments: argumentsText };
}
