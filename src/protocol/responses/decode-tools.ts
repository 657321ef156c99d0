/**
 * Decodes Responses `tools` (flat function tools, free-form custom tools, see custom-tools.ts, and
 * `namespace` tools grouping either) and `tool_choice`; `additional_tools` input items carry more
 * tool lists of the same shape (decode-input.ts).
 * https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools
 * (docs/wire-protocols.md §2.3). Every other type (hosted tools such as `web_search` or `tool_search`, and
 * types newer than this code) is kept as it came: a Responses upstream gets it unchanged, a
 * translated route maps it, drops it or refuses it, as the model's catalog entry says.
 */
import { clipEcho } from '../client-echo.js';
import { InvalidRequestError, type FunctionTool, type HostedTool, type ToolChoice } from '../canonical.js';
import {
  invalidType,
  invalidValue,
  isRecord,
  optionalArray,
  optionalBoolean,
  optionalRecord,
  optionalString,
  type JsonRecord,
} from '../field-checks.js';
import { decodeCustomTool } from './custom-tools.js';
import { requireString } from './required-fields.js';
import { decodeName, flatToolName } from './tool-names.js';

const TOOL_CHOICE_MODES = ['none', 'auto', 'required'] as const;

/** Every tool of a request: functions (namespaces flattened) and the tools kept as they came. */
export interface DecodedTools {
  tools: FunctionTool[];
  hostedTools: HostedTool[];
}

/** Decodes the `tools` field. A function name given twice is refused, as OpenAI refuses it. */
export function decodeTools(value: unknown): DecodedTools {
  const decoded: DecodedTools = { tools: [], hostedTools: [] };
  const list = optionalArray(value, 'tools');
  if (list !== undefined) addToolList(decoded, list, 'tools', 'refuse');
  return decoded;
}

/**
 * Adds one list of tools (`tools`, or an `additional_tools` item's `tools`) to `decoded`. A name
 * already declared is refused (`duplicates: "refuse"`) or, for the tool lists a client adds in its
 * input, the first declaration is kept.
 */
export function addToolList(decoded: DecodedTools, list: readonly unknown[], path: string, duplicates: 'refuse' | 'keep-first'): void {
  list.forEach((raw, index) => {
    const toolPath = `${path}[${index}]`;
    if (!isRecord(raw)) throw invalidType(toolPath, 'an object', raw);
    const type = requireString(raw.type, `${toolPath}.type`);
    if (type === 'namespace') {
      addNamespace(decoded, raw, toolPath, duplicates);
      return;
    }
    const tool = decodeFunctionLike(type, raw, toolPath);
    if (tool === undefined) decoded.hostedTools.push({ type, raw, param: `${toolPath}.type` });
    else addFunction(decoded, tool, toolPath, duplicates);
  });
}

/** `{type: "namespace", name, description?, tools}`: its function and custom tools, flattened. */
function addNamespace(decoded: DecodedTools, raw: JsonRecord, path: string, duplicates: 'refuse' | 'keep-first'): void {
  const namespace = requireString(raw.name, `${path}.name`);
  const members = optionalArray(raw.tools, `${path}.tools`) ?? [];
  members.forEach((member, index) => {
    const memberPath = `${path}.tools[${index}]`;
    if (!isRecord(member)) throw invalidType(memberPath, 'an object', member);
    const type = requireString(member.type, `${memberPath}.type`);
    const tool = decodeFunctionLike(type, member, memberPath);
    if (tool === undefined) {
      decoded.hostedTools.push({ type, raw: member, param: `${memberPath}.type` });
      return;
    }
    const declared = { namespace, name: tool.name };
    addFunction(decoded, { ...tool, name: flatToolName(namespace, tool.name), declared }, memberPath, duplicates);
  });
}

function addFunction(decoded: DecodedTools, tool: FunctionTool, path: string, duplicates: 'refuse' | 'keep-first'): void {
  if (decoded.tools.some((known) => known.name === tool.name)) {
    if (duplicates === 'keep-first') return;
    throw new InvalidRequestError(`Invalid 'tools': duplicate function name '${tool.name}'.`, `${path}.name`, 'invalid_value');
  }
  decoded.tools.push(tool);
}

/** A function or custom tool; undefined for every other type (kept as a hosted tool). */
function decodeFunctionLike(type: string, raw: JsonRecord, path: string): FunctionTool | undefined {
  if (type === 'custom') return decodeCustomTool(raw, path);
  if (type !== 'function') return undefined;
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

/** The refusal a translated route gives a hosted tool when its model is set to refuse them. */
export function unsupportedHostedTool(tool: HostedTool): InvalidRequestError {
  return new InvalidRequestError(
    `Tool type '${clipEcho(tool.type)}' is not supported: only function tools ({"type": "function", "name": ...}), custom tools ({"type": "custom", "name": ...}) and namespaces of them are.`,
    tool.param,
    'unsupported_tool',
  );
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
  // A Responses upstream gets the client's choice as sent. Canonically, a choice of tools
  // (`allowed_tools`) keeps its mode, and a hosted tool's choice lets the model choose.
  if (type === 'allowed_tools') return value.mode === 'required' ? 'required' : 'auto';
  if (type !== 'function' && type !== 'custom') return 'auto';
  const name = requireString(value.name, 'tool_choice.name');
  // A function choice names a function tool, a custom choice a custom tool.
  if (!tools.some((tool) => tool.name === name && (tool.custom !== undefined) === (type === 'custom'))) {
    throw new InvalidRequestError(`Tool choice '${clipEcho(name)}' not found in 'tools' parameter.`, 'tool_choice.name', 'invalid_value');
  }
  return { name };
}
