/**
 * The shell command the scripted upstream models run through Codex's shell tool, and how to call
 * it. The call's arguments follow the schema Codex itself declares in the request, so the test
 * breaks loudly (rather than passing by luck) if a Codex release renames the tool or changes its
 * parameters. Also small readers shared by the doubles.
 */

/** The command the model runs, and what it prints. */
export const SHELL_COMMAND = 'echo tollgate-ok';
export const COMMAND_OUTPUT = 'tollgate-ok';
/** The model's final answer. */
export const FINAL_ANSWER = 'The command printed tollgate-ok.';

/** The names Codex has used for its shell tool: unified exec, the string form, the argv form. */
const SHELL_TOOL_NAMES = ['exec_command', 'shell_command', 'shell'] as const;

/** A tool as the upstream saw it declared: its name and its JSON Schema. */
export interface DeclaredTool {
  name: string;
  schema: unknown;
}

/** A call to the shell tool, with arguments that satisfy its declared schema. */
export interface ShellCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** Throws (failing the test through the double's 500) when no declared tool looks like a shell. */
export function shellCall(tools: readonly DeclaredTool[]): ShellCall {
  for (const name of SHELL_TOOL_NAMES) {
    const tool = tools.find((candidate) => candidate.name === name);
    if (tool === undefined) continue;
    const properties = propertiesOf(tool.schema);
    for (const key of ['cmd', 'command']) {
      const property = properties[key];
      if (!isRecord(property)) continue;
      if (property.type === 'string') return { name, arguments: { [key]: SHELL_COMMAND } };
      if (property.type === 'array') return { name, arguments: { [key]: ['bash', '-lc', SHELL_COMMAND] } };
    }
    throw new Error(`Codex's ${name} tool has no string or array 'cmd'/'command' parameter: ${JSON.stringify(tool.schema)}`);
  }
  throw new Error(`No shell tool among the declared tools: ${tools.map((tool) => tool.name).join(', ')}`);
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
