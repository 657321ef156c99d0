/**
 * Decodes Responses `tools` (flat function tools, and free-form custom tools, see custom-tools.ts)
 * and `tool_choice`.
 * https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools
 * (docs/wire-formats.md §2.3). Hosted tools (web_search, file_search, …) cannot run on a translated
 * route, so they are refused with `unsupported_tool`, as §2.3 advises.
 */
import { InvalidRequestError, type FunctionTool, type ToolChoice } from '../canonical.js';
import {
  invalidType,
  invalidValue,
  isRecord,
  optionalArray,
  optionalBoolean,
  optionalRecord,
  optionalString,
  patternMismatch,
  unsupportedValue,
} from '../field-checks.js';
import { decodeCustomTool } from './custom-tools.js';
import { requireString } from './required-fields.js';

/** OpenAI's rule for function (and json_schema format) names. */
export const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const TOOL_CHOICE_MODES = ['none', 'auto', 'required'] as const;

export function decodeTools(value: unknown): FunctionTool[] {
  const list = optionalArray(value, 'tools');
  if (list === undefined) return [];
  const seen = new Set<string>();
  return list.map((raw, index) => {
    const path = `tools[${index}]`;
    const tool = decodeTool(raw, path);
    if (seen.has(tool.name)) {
      throw new InvalidRequestError(`Invalid 'tools': duplicate function name '${tool.name}'.`, `${path}.name`, 'invalid_value');
    }
    seen.add(tool.name);
    return tool;
  });
}

function decodeTool(raw: unknown, path: string): FunctionTool {
  if (!isRecord(raw)) throw invalidType(path, 'an object', raw);
  const type = requireString(raw.type, `${path}.type`);
  if (type === 'custom') return decodeCustomTool(raw, path);
  if (type !== 'function') {
    throw new InvalidRequestError(
      `Tool type '${type}' is not supported: only function tools ({"type": "function", "name": ...}) and custom tools ({"type": "custom", "name": ...}) are.`,
      `${path}.type`,
      'unsupported_tool',
    );
  }
  const name = decodeName(raw.name, `${path}.name`);
  const tool: FunctionTool = { name };
  const description = optionalString(raw.description, `${path}.description`);
  if (description !== undefined) tool.description = description;
  const parameters = optionalRecord(raw.parameters, `${path}.parameters`);
  if (parameters !== undefined) tool.parameters = parameters;
  const strict = optionalBoolean(raw.strict, `${path}.strict`);
  if (strict !== undefined) tool.strict = strict;
  return tool;
}

/** A name matching {@link FUNCTION_NAME_PATTERN}; `param` is where it sits. */
export function decodeName(value: unknown, param: string): string {
  const name = requireString(value, param);
  if (!FUNCTION_NAME_PATTERN.test(name)) throw patternMismatch(param, FUNCTION_NAME_PATTERN.source);
  return name;
}

/** `tools` must be decoded first: a named choice has to be one of them. */
export function decodeToolChoice(value: unknown, tools: readonly FunctionTool[]): ToolChoice {
  if (value === undefined || value === null) return 'auto';
  if (typeof value === 'string') {
    if (!(TOOL_CHOICE_MODES as readonly string[]).includes(value)) throw invalidValue('tool_choice', value, TOOL_CHOICE_MODES);
    const mode = value as ToolChoice & string;
    if (mode === 'required' && tools.length === 0) {
      throw new InvalidRequestError("Tool choice 'required' must be specified with 'tools' parameter.", 'tool_choice', 'invalid_value');
    }
    return mode;
  }
  if (!isRecord(value)) throw invalidType('tool_choice', 'a string or an object', value);
  const type = requireString(value.type, 'tool_choice.type');
  if (type !== 'function' && type !== 'custom') {
    throw unsupportedValue(
      'tool_choice.type',
      `Tool choice type '${type}' is not supported: use 'none', 'auto', 'required', {"type": "function", "name": ...} or {"type": "custom", "name": ...}.`,
    );
  }
  const name = requireString(value.name, 'tool_choice.name');
  // A function choice names a function tool, a custom choice a custom tool.
  if (!tools.some((tool) => tool.name === name && (tool.custom !== undefined) === (type === 'custom'))) {
    throw new InvalidRequestError(`Tool choice '${name}' not found in 'tools' parameter.`, 'tool_choice.name', 'invalid_value');
  }
  return { name };
}
