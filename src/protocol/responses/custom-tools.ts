/**
 * Free-form ("custom") tools on /v1/responses: a tool whose input is one string, optionally
 * constrained by a grammar, instead of JSON arguments. Coding agents declare their patch tool this
 * way (Codex's `apply_patch`).
 * https://platform.openai.com/docs/guides/function-calling#custom-tools
 *
 * Few upstreams outside OpenAI take custom tools, so every route carries one as an ordinary
 * function with a single string parameter, `input`, whose description states the grammar; the
 * encoder turns the call back into a `custom_tool_call` (see {@link customInputFromArguments}).
 * In the conversation history, `custom_tool_call` and `custom_tool_call_output` items become the
 * matching function call and output, so the upstream sees the same shape it produced.
 */
import type { FunctionTool, InputItem } from '../canonical.js';
import { isRecord, optionalRecord, optionalString, type JsonRecord } from '../field-checks.js';
import { requireEnum, requireNonEmptyString, requireString } from './required-fields.js';
import { decodeName, flatToolName } from './tool-names.js';

/** The one parameter of the function a custom tool becomes. */
export const CUSTOM_INPUT_PARAMETER = 'input';

const FORMAT_TYPES = ['text', 'grammar'] as const;
const GRAMMAR_SYNTAXES = ['lark', 'regex'] as const;

/** `{type: "custom", name, description?, format?}` → a canonical function taking `{input: string}`. */
export function decodeCustomTool(raw: JsonRecord, path: string): FunctionTool {
  const name = decodeName(raw.name, `${path}.name`);
  const description = optionalString(raw.description, `${path}.description`);
  const format = decodeFormat(raw.format, `${path}.format`);
  const tool: FunctionTool = {
    name,
    parameters: {
      type: 'object',
      properties: { [CUSTOM_INPUT_PARAMETER]: { type: 'string', description: inputDescription(format) } },
      required: [CUSTOM_INPUT_PARAMETER],
      additionalProperties: false,
    },
    custom: format === undefined ? {} : { format },
  };
  if (description !== undefined) tool.description = description;
  return tool;
}

function decodeFormat(value: unknown, path: string): JsonRecord | undefined {
  const format = optionalRecord(value, path);
  if (format === undefined) return undefined;
  const type = requireEnum(format.type, `${path}.type`, FORMAT_TYPES);
  if (type === 'text') return { type: 'text' };
  const syntax = requireEnum(format.syntax, `${path}.syntax`, GRAMMAR_SYNTAXES);
  const definition = requireString(format.definition, `${path}.definition`);
  return { type: 'grammar', syntax, definition };
}

/** What the model reads about `input`: the tool's whole input, and the grammar it must follow. */
function inputDescription(format: JsonRecord | undefined): string {
  const base = "The tool's whole input, as raw text (not JSON).";
  if (format?.type !== 'grammar') return base;
  return `${base} It must match this ${String(format.syntax)} grammar:\n${String(format.definition)}`;
}

/**
 * The free-form input out of the JSON arguments an upstream produced for the function. Arguments
 * that are not an object with a string `input` (a model that ignored the schema) are passed on as
 * they are, which is the client's best chance to make sense of them.
 */
export function customInputFromArguments(argumentsText: string): string {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (isRecord(parsed) && typeof parsed[CUSTOM_INPUT_PARAMETER] === 'string') return parsed[CUSTOM_INPUT_PARAMETER];
  } catch {
    // Not JSON: fall through.
  }
  return argumentsText;
}

/** `{type: "custom_tool_call", call_id, name, input}` → the function call the upstream made. */
export function decodeCustomToolCall(raw: JsonRecord, path: string): InputItem {
  const callId = requireNonEmptyString(raw.call_id, `${path}.call_id`);
  const name = callName(raw, path);
  const input = requireString(raw.input, `${path}.input`);
  return { type: 'function_call', callId, name, arguments: JSON.stringify({ [CUSTOM_INPUT_PARAMETER]: input }) };
}

/**
 * The name a replayed call goes upstream under: a call the model made to a namespaced tool carries
 * `namespace`, and the upstream knew that tool by its flat name.
 */
export function callName(raw: JsonRecord, path: string): string {
  const name = requireNonEmptyString(raw.name, `${path}.name`);
  const namespace = optionalString(raw.namespace, `${path}.namespace`);
  return namespace === undefined || namespace === '' ? name : flatToolName(namespace, name);
}
