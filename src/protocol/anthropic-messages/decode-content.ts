/**
 * Anthropic Messages content (`system`, `messages[].content`) read into canonical input items
 * (docs/wire-protocols.md §4.2). Blocks the canonical model cannot carry are left out rather than
 * refused, because the same body may be passed through to an Anthropic upstream that takes them:
 * `thinking` and `redacted_thinking` (their signatures only mean something to Anthropic),
 * `document`, server-tool blocks, images from the Files API and types newer than this code.
 *
 * `cache_control` on a system block or a content block becomes a canonical prompt-cache
 * breakpoint (cache-control.ts; docs/wire-protocols.md §21): on `instructions` for the system
 * prompt (its blocks are joined into one text, which carries the breakpoint if any of them did),
 * on the part or item a block becomes otherwise. A block left out passes its breakpoint to the
 * part or item before it in the same message.
 */
import type { CacheBreakpoint, ContentPart, InputItem, MessageRole } from '../canonical.js';
import { invalidType, invalidValue, missingParameter, optionalArray, optionalBoolean, optionalString, recordAt, type JsonRecord } from '../field-checks.js';
import { requireRecord, requireString } from '../chat-completions/required-fields.js';
import { cacheBreakpoint } from './cache-control.js';

const ROLES = ['user', 'assistant', 'system'] as const;
type Role = (typeof ROLES)[number] & MessageRole;

function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** The system prompt: a string or text blocks, and the breakpoint the last marked block asks for. */
export function decodeSystem(value: unknown): { text?: string; cache?: CacheBreakpoint } {
  if (value === undefined || value === null) return {};
  if (typeof value === 'string') return value === '' ? {} : { text: value };
  const blocks = optionalArray(value, 'system') ?? [];
  let cache: CacheBreakpoint | undefined;
  const texts = blocks.map((_block, index) => {
    const block = recordAt(blocks, index, 'system');
    if (block.type !== 'text') throw invalidValue(`system[${index}].type`, typeof block.type === 'string' ? block.type : String(block.type), ['text']);
    cache = cacheBreakpoint(block.cache_control, `system[${index}].cache_control`) ?? cache;
    return requireString(block.text, `system[${index}].text`);
  });
  const text = texts.join('\n');
  if (text === '') return {};
  return cache === undefined ? { text } : { text, cache };
}

/** `messages` as canonical items, in order (a message's tool results become items of their own). */
export function decodeMessages(value: unknown): InputItem[] {
  if (value === undefined || value === null) throw missingParameter('messages');
  if (!Array.isArray(value)) throw invalidType('messages', 'an array', value);
  const items: InputItem[] = [];
  value.forEach((_message, index) => {
    const param = `messages[${index}]`;
    const message = recordAt(value, index, 'messages');
    const role = requireString(message.role, `${param}.role`);
    if (!isRole(role)) throw invalidValue(`${param}.role`, role, ROLES);
    items.push(...decodeMessage(role, message.content, `${param}.content`));
  });
  return items;
}

function decodeMessage(role: Role, content: unknown, param: string): InputItem[] {
  if (typeof content === 'string') return [{ type: 'message', role, content: [{ type: 'text', text: content }] }];
  if (content === undefined || content === null) throw missingParameter(param);
  if (!Array.isArray(content)) throw invalidType(param, 'a string or an array', content);
  const items: InputItem[] = [];
  let parts: ContentPart[] = [];
  // Text and images stay one message; a tool block between them splits it, keeping the order.
  const flush = (): void => {
    if (parts.length > 0) items.push({ type: 'message', role, content: parts });
    parts = [];
  };
  // What the last block kept became: a breakpoint on a block left out goes there.
  let last: { cache?: CacheBreakpoint } | undefined;
  content.forEach((_block, index) => {
    const block = recordAt(content, index, param);
    const at = `${param}[${index}]`;
    const cache = cacheBreakpoint(block.cache_control, `${at}.cache_control`);
    let kept: { cache?: CacheBreakpoint } | undefined;
    switch (block.type) {
      case 'text': {
        const part: ContentPart = { type: 'text', text: requireString(block.text, `${at}.text`) };
        parts.push(part);
        kept = part;
        break;
      }
      case 'image': {
        const url = imageUrl(block.source, `${at}.source`);
        const part: ContentPart | undefined = url === undefined ? undefined : { type: 'image', url };
        if (part !== undefined) parts.push(part);
        kept = part;
        break;
      }
      case 'tool_use': {
        flush();
        const call: Extract<InputItem, { type: 'function_call' }> = { type: 'function_call', callId: requireString(block.id, `${at}.id`), name: requireString(block.name, `${at}.name`), arguments: JSON.stringify(block.input ?? {}) };
        items.push(call);
        kept = call;
        break;
      }
      case 'tool_result': {
        flush();
        const output: Extract<InputItem, { type: 'function_call_output' }> = { type: 'function_call_output', callId: requireString(block.tool_use_id, `${at}.tool_use_id`), output: toolResultText(block, at) };
        items.push(output);
        kept = output;
        break;
      }
      default:
        if (typeof block.type !== 'string') throw invalidType(`${at}.type`, 'a string', block.type);
      // thinking, redacted_thinking, document, server-tool blocks: see the file comment.
    }
    last = kept ?? last;
    if (cache !== undefined && last !== undefined) last.cache = cache;
  });
  flush();
  return items;
}

/** A tool result's content as text; an error result says so, since the canonical output has no flag. */
function toolResultText(block: JsonRecord, param: string): string {
  const isError = optionalBoolean(block.is_error, `${param}.is_error`) === true;
  const content = block.content;
  let text: string;
  if (content === undefined || content === null) text = '';
  else if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    text = content
      .map((_part, index) => {
        const part = recordAt(content, index, `${param}.content`);
        // Images in a tool result have no place in a canonical output string.
        return part.type === 'text' ? (optionalString(part.text, `${param}.content[${index}].text`) ?? '') : '';
      })
      .filter((piece) => piece !== '')
      .join('\n');
  } else throw invalidType(`${param}.content`, 'a string or an array', content);
  return isError ? `Error: ${text}` : text;
}

/**
 * An image source as the canonical URL: base64 data becomes a `data:` URL. Other sources (a Files
 * API `file_id`) only mean something to Anthropic: undefined, and the image is left out.
 */
function imageUrl(value: unknown, param: string): string | undefined {
  const source = requireRecord(value, param);
  if (source.type === 'base64') {
    const mediaType = requireString(source.media_type, `${param}.media_type`);
    return `data:${mediaType};base64,${requireString(source.data, `${param}.data`)}`;
  }
  if (source.type === 'url') return requireString(source.url, `${param}.url`);
  if (typeof source.type !== 'string') throw invalidType(`${param}.type`, 'a string', source.type);
  return undefined;
}
