/**
 * Chat Completions `tools`, `tool_choice` and `response_format` → canonical form.
 * Wire format: docs/wire-protocols.md §1.1 and §2.3 (Chat nests `function`, canonical is flat);
 * https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools
 */
import { clipEcho } from '../client-echo.js';
import { InvalidRequestError, type FunctionTool, type ResponseFormat, type ToolChoice } from '../canonical.js';
import {
  emptyArray,
  emptyString,
  invalidType,
  invalidValue,
  isRecord,
  optionalArray,
  optionalBoolean,
  optionalRecord,
  optionalString,
  patternMismatch,
  recordAt,
  stringTooLong,
  unsupportedValue,
  type JsonRecord,
} from '../field-checks.js';
import { requireRecord, requireString } from './required-fields.js';

const NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;
const NAME_MAXIMUM_LENGTH = 64;
const TOOL_CHOICE_MODES = ['none', 'auto', 'required'] as const;
const RESPONSE_FORMAT_TYPES = ['text', 'json_object', 'json_schema'] as const;

/** Function and schema names share OpenAI's rule: `[a-zA-Z0-9_-]`, 1 to 64 characters. */
function checkName(name: string, param: string): void {
  if (name === '') throw emptyString(param);
  if (name.length > NAME_MAXIMUM_LENGTH) throw stringTooLong(param, NAME_MAXIMUM_LENGTH, name.length);
  if (!NAME_PATTERN.test(name)) throw patternMismatch(param, NAME_PATTERN.source);
}

/** Decodes `tools` (absent or null → no tools). */
export function decodeTools(value: unknown): FunctionTool[] {
  const list = optionalArray(value, 'tools');
  if (list === undefined) return [];
  if (list.length === 0) throw emptyArray('tools');
  const seen = new Set<string>();
  return list.map((_, index) => {
    const tool = decodeTool(recordAt(list, index, 'tools'), `tools[${index}]`);
    // Duplicate names make tool_choice and the returned calls ambiguous, and translated upstreams refuse them.
    if (seen.has(tool.name)) {
      throw new InvalidRequestError(
        `Invalid 'tools[${index}].function.name': duplicate function name '${tool.name}'; tool names must be unique.`,
        `tools[${index}].function.name`,
        'invalid_value',
      );
    }
    seen.add(tool.name);
    return tool;
  });
}

function decodeTool(tool: JsonRecord, param: string): FunctionTool {
  const type = requireString(tool.type, `${param}.type`);
  if (type === 'custom') {
    throw new InvalidRequestError(
      'Custom tools are not supported on /v1/chat/completions; use function tools.',
      `${param}.type`,
      'unsupported_tool',
    );
  }
  if (type !== 'function') throw invalidValue(`${param}.type`, type, ['function', 'custom']);
  const fn = requireRecord(tool.function, `${param}.function`);
  const name = requireString(fn.name, `${param}.function.name`);
  checkName(name, `${param}.function.name`);
  const description = optionalString(fn.description, `${param}.function.description`);
  const parameters = optionalRecord(fn.parameters, `${param}.function.parameters`);
  const strict = optionalBoolean(fn.strict, `${param}.function.strict`);
  const decoded: FunctionTool = { name };
  if (description !== undefined) decoded.description = description;
  if (parameters !== undefined) decoded.parameters = parameters;
  if (strict !== undefined) decoded.strict = strict;
  return decoded;
}

/**
 * Decodes `tool_choice` against the decoded tools. Absent means `auto` with tools and `none`
 * without (OpenAI's default).
 */
export function decodeToolChoice(value: unknown, tools: readonly FunctionTool[]): ToolChoice {
  if (value === undefined || value === null) return tools.length > 0 ? 'auto' : 'none';
  if (tools.length === 0) {
    throw new InvalidRequestError(
      "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
      'tool_choice',
      'invalid_value',
    );
  }
  if (typeof value === 'string') {
    if (!(TOOL_CHOICE_MODES as readonly string[]).includes(value)) throw invalidValue('tool_choice', value, TOOL_CHOICE_MODES);
    return value as ToolChoice;
  }
  if (!isRecord(value)) throw invalidType('tool_choice', 'one of a string or object', value);
  const type = requireString(value.type, 'tool_choice.type');
  if (type === 'custom') {
    throw new InvalidRequestError('Custom tools are not supported on /v1/chat/completions; use function tools.', 'tool_choice.type', 'unsupported_tool');
  }
  if (type === 'allowed_tools') {
    throw unsupportedValue('tool_choice.type', "Unsupported value: 'tool_choice' of type 'allowed_tools' is not supported; use 'auto', 'required' or a named function.");
  }
  if (type !== 'function') throw invalidValue('tool_choice.type', type, ['function', 'allowed_tools', 'custom']);
  const fn = requireRecord(value.function, 'tool_choice.function');
  const name = requireString(fn.name, 'tool_choice.function.name');
  if (!tools.some((tool) => tool.name === name)) {
    throw new InvalidRequestError(
      `Invalid value for 'tool_choice': function '${clipEcho(name)}' is not among the provided 'tools'.`,
      'tool_choice.function.name',
      'invalid_value',
    );
  }
  return { name };
}

/** Decodes `response_format` (absent or null → undefined). */
export function decodeResponseFormat(body: JsonRecord): ResponseFormat | undefined {
  const format = optionalRecord(body.response_format, 'response_format');
  if (format === undefined) return undefined;
  const type = requireString(format.type, 'response_format.type');
  if (!(RESPONSE_FORMAT_TYPES as readonly string[]).includes(type)) throw invalidValue('response_format.type', type, RESPONSE_FORMAT_TYPES);
  if (type === 'text') return { type: 'text' };
  if (type === 'json_object') return { type: 'json_object' };

  const jsonSchema = requireRecord(format.json_schema, 'response_format.json_schema');
  const name = requireString(jsonSchema.name, 'response_format.json_schema.name');
  checkName(name, 'response_format.json_schema.name');
  const description = optionalString(jsonSchema.description, 'response_format.json_schema.description');
  // OpenAI makes `schema` optional; the canonical model requires one, and `{}` accepts any JSON.
  const schema = optionalRecord(jsonSchema.schema, 'response_format.json_schema.schema') ?? {};
  const strict = optionalBoolean(jsonSchema.strict, 'response_format.json_schema.strict');
  const decoded: ResponseFormat = { type: 'json_schema', name, schema };
  if (strict !== undefined) decoded.strict = strict;
  if (description !== undefined) decoded.description = description;
  return decoded;
}
