/**
 * An Anthropic Messages request body (`POST /v1/messages`, docs/wire-protocols.md §4.2) decoded into
 * the canonical request. Only what the gateway needs is validated: the same body may be passed
 * through to an Anthropic upstream, which then sees every field as the client sent it, so fields
 * the canonical model has no place for (`metadata`, `top_k`, `stop_sequences`, `context_management`,
 * `service_tier`, betas newer than this code) are accepted and, on translated routes, not sent on.
 * `cache_control` markers become canonical prompt-cache breakpoints (cache-control.ts).
 *
 * Thinking becomes a reasoning effort: `output_config.effort` when given, else one derived from
 * `thinking.budget_tokens` (the provider's budget table read backwards); `thinking: {type:
 * "disabled"}` turns it off.
 */
import { REASONING_EFFORTS, type CanonicalRequest, type FunctionTool, type HostedTool, type ReasoningEffort, type ToolChoice } from '../canonical.js';
import {
  missingParameter,
  optionalArray,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalNumber,
  optionalRecord,
  optionalString,
  recordAt,
  type JsonRecord,
} from '../field-checks.js';
import { requireString } from '../chat-completions/required-fields.js';
import { decodeMessages, decodeSystem } from './decode-content.js';
import { markCachedTools } from './cache-control.js';
import { serverTool } from './server-tools.js';

export interface DecodedMessages {
  request: CanonicalRequest;
  /** `thinking.display: "omitted"`: the client wants thinking blocks without their text. */
  omitThinking: boolean;
}

/** Budgets at or below which a `thinking.budget_tokens` reads as that effort (above the last: max). */
const EFFORT_BY_BUDGET: ReadonlyArray<[number, ReasoningEffort]> = [
  [2_048, 'low'],
  [8_192, 'medium'],
  [24_576, 'high'],
  [32_768, 'xhigh'],
];

/**
 * Decodes a Messages body. `countOnly` is for `count_tokens`, which takes the same body without
 * `max_tokens` and `stream`.
 */
export function decodeMessagesRequest(body: unknown, options: { countOnly?: boolean } = {}): DecodedMessages {
  const root = optionalRecord(body, 'body');
  if (root === undefined) throw missingParameter('model');
  const model = requireString(root.model, 'model');
  const maxTokens = optionalInteger(root.max_tokens, 'max_tokens', { minimum: 1 });
  if (maxTokens === undefined && options.countOnly !== true) throw missingParameter('max_tokens');
  const system = decodeSystem(root.system);
  const { tools, hostedTools } = decodeTools(root.tools);
  markCachedTools(root.tools, tools);
  const choice = withoutServerToolChoice(decodeToolChoice(root.tool_choice), hostedTools);
  const thinking = decodeThinking(root);
  const temperature = optionalNumber(root.temperature, 'temperature', { minimum: 0, maximum: 1 });
  const topP = optionalNumber(root.top_p, 'top_p', { minimum: 0, maximum: 1 });
  const request: CanonicalRequest = {
    model,
    input: decodeMessages(root.messages),
    tools,
    toolChoice: choice.toolChoice,
    stream: options.countOnly === true ? false : (optionalBoolean(root.stream, 'stream') ?? false),
    // This surface says where the prompt cache's breakpoints go (decode-content.ts).
    cacheMarked: true,
  };
  if (system.text !== undefined) request.instructions = system.text;
  if (system.cache !== undefined) request.instructionsCache = system.cache;
  if (hostedTools.length > 0) request.hostedTools = hostedTools;
  if (choice.disableParallel) request.parallelToolCalls = false;
  if (maxTokens !== undefined) request.maxOutputTokens = maxTokens;
  if (thinking.effort !== undefined) request.reasoningEffort = thinking.effort;
  if (temperature !== undefined) request.temperature = temperature;
  if (topP !== undefined) request.topP = topP;
  return { request, omitThinking: thinking.omitText };
}

/**
 * Client tools. A tool with a `type` other than `custom` is one of Anthropic's server tools (web
 * search, code execution, …), which only Anthropic runs: it is kept apart as a hosted tool
 * (server-tools.ts), which reaches an Anthropic upstream through pass-through.
 */
function decodeTools(value: unknown): { tools: FunctionTool[]; hostedTools: HostedTool[] } {
  const tools = optionalArray(value, 'tools') ?? [];
  const decoded: FunctionTool[] = [];
  const hostedTools: HostedTool[] = [];
  tools.forEach((_tool, index) => {
    const tool = recordAt(tools, index, 'tools');
    const type = optionalString(tool.type, `tools[${index}].type`);
    if (type !== undefined && type !== 'custom') {
      hostedTools.push(serverTool(type, tool, index));
      return;
    }
    const name = requireString(tool.name, `tools[${index}].name`);
    const description = optionalString(tool.description, `tools[${index}].description`);
    const schema = optionalRecord(tool.input_schema, `tools[${index}].input_schema`);
    if (schema === undefined) throw missingParameter(`tools[${index}].input_schema`);
    decoded.push({ name, parameters: schema, ...(description === undefined ? {} : { description }) });
  });
  return { tools: decoded, hostedTools };
}

/** A choice of a server tool by name lets the model choose: a translated route may not have it. */
function withoutServerToolChoice(choice: { toolChoice: ToolChoice; disableParallel: boolean }, hostedTools: readonly HostedTool[]): { toolChoice: ToolChoice; disableParallel: boolean } {
  const chosen = choice.toolChoice;
  if (typeof chosen !== 'object' || !hostedTools.some((tool) => tool.raw.name === chosen.name)) return choice;
  return { ...choice, toolChoice: 'auto' };
}

const TOOL_CHOICE_TYPES = ['auto', 'any', 'tool', 'none'] as const;

function decodeToolChoice(value: unknown): { toolChoice: ToolChoice; disableParallel: boolean } {
  const choice = optionalRecord(value, 'tool_choice');
  if (choice === undefined) return { toolChoice: 'auto', disableParallel: false };
  const type = optionalEnum(choice.type, 'tool_choice.type', TOOL_CHOICE_TYPES);
  if (type === undefined) throw missingParameter('tool_choice.type');
  const disableParallel = optionalBoolean(choice.disable_parallel_tool_use, 'tool_choice.disable_parallel_tool_use') === true;
  const toolChoice: ToolChoice = type === 'any' ? 'required' : type === 'tool' ? { name: requireString(choice.name, 'tool_choice.name') } : type;
  return { toolChoice, disableParallel };
}

const THINKING_TYPES = ['enabled', 'disabled', 'adaptive'] as const;

function decodeThinking(root: JsonRecord): { effort: ReasoningEffort | undefined; omitText: boolean } {
  const thinking = optionalRecord(root.thinking, 'thinking');
  const type = thinking === undefined ? undefined : optionalEnum(thinking.type, 'thinking.type', THINKING_TYPES);
  if (thinking !== undefined && type === undefined) throw missingParameter('thinking.type');
  // Any display is taken (Anthropic adds new ones); only `omitted` changes what the gateway sends.
  const display = thinking === undefined ? undefined : optionalString(thinking.display, 'thinking.display');
  const budget = type === 'enabled' ? optionalInteger(thinking?.budget_tokens, 'thinking.budget_tokens', { minimum: 1_024 }) : undefined;
  if (type === 'enabled' && budget === undefined) throw missingParameter('thinking.budget_tokens');
  const config = optionalRecord(root.output_config, 'output_config');
  const asked = config === undefined ? undefined : optionalEnum(config.effort, 'output_config.effort', REASONING_EFFORTS);
  if (type === 'disabled') return { effort: undefined, omitText: false };
  const effort = asked ?? (budget === undefined ? (type === 'adaptive' ? 'high' : undefined) : effortForBudget(budget));
  return { effort, omitText: display === 'omitted' };
}

function effortForBudget(budget: number): ReasoningEffort {
  for (const [ceiling, effort] of EFFORT_BY_BUDGET) if (budget <= ceiling) return effort;
  return 'max';
}
