/**
 * The scripted model behind the Claude Code runs, independent of wire format: each upstream double
 * reads its request into a Conversation (the readers of test/codex/) and writes the turn chosen
 * here in its own format. A prompt names its scenario by a marker word; the model's tool calls
 * follow the schemas Claude Code itself declares, so the test breaks loudly if a release renames a
 * tool or its parameters.
 */
import type { Conversation } from '../codex/model-script.js';
import { isRecord, type DeclaredTool } from '../codex/shell-call.js';

export const PLAIN_PROMPT = 'PLAIN: say hello.';
export const PLAIN_ANSWER = 'Hello from the scripted model.';
export const THINK_PROMPT = 'THINK: what is six times seven?';
export const THINKING_TEXT = 'Six sevens are forty-two.';
export const THINK_ANSWER = 'It is 42.';
export const BASH_PROMPT = 'BASH: run `echo tollgate-ok` and tell me what it printed.';
export const BASH_COMMAND = 'echo tollgate-ok';
export const BASH_OUTPUT = 'tollgate-ok';
export const BASH_ANSWER = 'The command printed tollgate-ok.';
export const EDIT_FILE = 'note.txt';
export const EDIT_BEFORE = 'colour: red\n';
export const EDIT_AFTER = 'colour: green\n';
export const EDIT_PROMPT = `EDIT: in ${EDIT_FILE}, change red to green.`;
export const EDIT_ANSWER = `Changed red to green in ${EDIT_FILE}.`;

export interface ScriptedCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** One model turn: optional thinking, then text or one tool call. */
export type ClaudeTurn = { thinking?: string } & ({ kind: 'text'; text: string } | { kind: 'call'; call: ScriptedCall });

/** The marker of the scenario the user asked for ('' for requests that are not the user's task). */
function scenario(conversation: Conversation): string {
  const match = /\b(PLAIN|THINK|BASH|EDIT):/.exec(conversation.userText);
  return match?.[1] ?? '';
}

/** `workspace` is the absolute folder Claude Code runs in (its tools want absolute paths). */
export function claudeTurn(conversation: Conversation, workspace: string): ClaudeTurn {
  const done = conversation.outputs.length;
  switch (scenario(conversation)) {
    case 'THINK':
      return { thinking: THINKING_TEXT, kind: 'text', text: THINK_ANSWER };
    case 'BASH':
      if (done === 0) return { kind: 'call', call: toolCall(conversation.tools, 'Bash', { command: BASH_COMMAND, description: 'Print a word' }) };
      return { kind: 'text', text: BASH_ANSWER };
    case 'EDIT': {
      const path = `${workspace}/${EDIT_FILE}`;
      // Claude Code edits only files the model has read in this session.
      if (done === 0) return { kind: 'call', call: toolCall(conversation.tools, 'Read', { file_path: path }) };
      if (done === 1) return { kind: 'call', call: toolCall(conversation.tools, 'Edit', { file_path: path, old_string: 'red', new_string: 'green' }) };
      return { kind: 'text', text: EDIT_ANSWER };
    }
    case 'PLAIN':
      return { kind: 'text', text: PLAIN_ANSWER };
    default:
      // Side requests (titles, summaries): a short answer.
      return { kind: 'text', text: 'OK' };
  }
}

/** A call to `name` whose arguments are checked against the tool's declared required parameters. */
function toolCall(tools: readonly DeclaredTool[], name: string, args: Record<string, unknown>): ScriptedCall {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`No ${name} tool among the declared tools: ${tools.map((candidate) => candidate.name).join(', ')}`);
  const schema = isRecord(tool.schema) ? tool.schema : {};
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const key of Object.keys(args)) if (!(key in properties)) throw new Error(`Claude Code's ${name} tool has no '${key}' parameter: ${JSON.stringify(schema)}`);
  for (const key of required) if (typeof key === 'string' && !(key in args)) throw new Error(`Claude Code's ${name} tool requires '${key}'`);
  return { name, arguments: args };
}
