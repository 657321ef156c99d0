/**
 * The shell command the scripted upstream models run through Codex, and how to call it. The call
 * follows what Codex itself declares in the request, so the test breaks loudly (rather than passing
 * by luck) if a Codex release renames a tool or changes its parameters. Codex declares one of two
 * tool sets, depending on the model:
 * - a model it has no metadata for (`model-5.6…`): a plain `exec_command` function;
 * - a model of its bundled `gpt-5.6` family: "code mode", one free-form `exec` tool in the
 *   `functions` namespace (sent in an `additional_tools` input item) that runs JavaScript calling
 *   the real tools (`tools.exec_command(…)`, `tools.apply_patch(…)`). Translated routes see it as
 *   the function `functions__exec` taking one string `input`.
 * Also small readers shared by the doubles.
 */

/** The command the model runs, and what it prints. */
export const SHELL_COMMAND = 'echo tollgate-ok';
export const COMMAND_OUTPUT = 'tollgate-ok';
/** The model's final answer after the command. */
export const FINAL_ANSWER = 'The command printed tollgate-ok.';

/** The names Codex has used for its shell tool: unified exec, the string form, the argv form. */
const SHELL_TOOL_NAMES = ['exec_command', 'shell_command', 'shell'] as const;

/** A tool as the upstream saw it declared. */
export interface DeclaredTool {
  /** The name the upstream calls it by (flat on translated routes). */
  name: string;
  /** JSON Schema of a function's parameters. */
  schema: unknown;
  /** Responses only: the namespace it was declared in. */
  namespace?: string;
  /** Responses only: a free-form tool. */
  custom?: boolean;
}

/** A call the scripted model makes: function arguments, or a free-form tool's `input` text. */
export interface ToolCall {
  name: string;
  namespace?: string;
  /** For a free-form tool on a translated route, `{input}`: the function it became. */
  arguments: Record<string, unknown>;
  /** Set when the tool is free-form (its whole input is `arguments.input`). */
  custom?: boolean;
}

/** Code mode's tool: `exec` in the `functions` namespace, or its flat name on translated routes. */
export function codeModeTool(tools: readonly DeclaredTool[]): DeclaredTool | undefined {
  return tools.find((tool) => (tool.name === 'exec' && tool.namespace === 'functions') || tool.name === 'functions__exec');
}

/** A call of code mode's tool running `script`; throws when it is not there. */
export function codeModeCall(tools: readonly DeclaredTool[], script: string): ToolCall {
  const tool = codeModeTool(tools);
  if (tool === undefined) throw new Error(`No code-mode exec tool among: ${describe(tools)}`);
  const call: ToolCall = { name: tool.name, arguments: { input: script }, custom: true };
  if (tool.namespace !== undefined) call.namespace = tool.namespace;
  if (tool.custom !== true) assertOneStringInput(tool);
  return call;
}

/** Throws (failing the test through the double's 500) when no declared tool runs a command. */
export function shellCall(tools: readonly DeclaredTool[]): ToolCall {
  if (codeModeTool(tools) !== undefined) {
    return codeModeCall(tools, `const result = await tools.exec_command({ cmd: ${JSON.stringify(SHELL_COMMAND)} });\ntext(result.output);`);
  }
  return commandCall(tools, SHELL_COMMAND);
}

/** A call of the plain shell tool running `command`, with arguments that satisfy its schema. */
export function commandCall(tools: readonly DeclaredTool[], command: string): ToolCall {
  for (const name of SHELL_TOOL_NAMES) {
    const tool = tools.find((candidate) => candidate.name === name && candidate.namespace === undefined);
    if (tool === undefined) continue;
    const properties = propertiesOf(tool.schema);
    for (const key of ['cmd', 'command']) {
      const property = properties[key];
      if (!isRecord(property)) continue;
      if (property.type === 'string') return { name, arguments: { [key]: command } };
      if (property.type === 'array') return { name, arguments: { [key]: ['bash', '-lc', command] } };
    }
    throw new Error(`Codex's ${name} tool has no string or array 'cmd'/'command' parameter: ${JSON.stringify(tool.schema)}`);
  }
  throw new Error(`No shell tool among the declared tools: ${describe(tools)}`);
}

/** A free-form tool on a translated route must have become a function of one string `input`. */
export function assertOneStringInput(tool: DeclaredTool): void {
  const properties = propertiesOf(tool.schema);
  if (Object.keys(properties).join() !== 'input' || !isRecord(properties.input) || properties.input.type !== 'string') {
    throw new Error(`${tool.name} does not take one string 'input': ${JSON.stringify(tool.schema)}`);
  }
}

function describe(tools: readonly DeclaredTool[]): string {
  return tools.map((tool) => (tool.namespace === undefined ? tool.name : `${tool.namespace}.${tool.name}`)).join(', ');
}

function propertiesOf(schema: unknown): Record<string, unknown> {
  if (!isRecord(schema) || !isRecord(schema.properties)) return {};
  return schema.properties;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text of a message or tool-result content, whether a string or a list of text parts/blocks. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
}
