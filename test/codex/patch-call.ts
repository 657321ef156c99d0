/**
 * The second thing the scripted models can do: edit a file with Codex's `apply_patch`, a free-form
 * (`custom`) tool whose input is the patch text itself. Upstreams see it as a function taking one
 * string, `input`; Codex must get the call back as a `custom_tool_call` to apply it.
 */
import { isRecord, type DeclaredTool } from './shell-call.js';

/** A prompt that mentions this file asks for the patch instead of the shell command. */
export const PATCH_FILE = 'tollgate-note.txt';
export const PATCH_FILE_TEXT = 'written through tollgate';
export const PATCH = `*** Begin Patch\n*** Add File: ${PATCH_FILE}\n+${PATCH_FILE_TEXT}\n*** End Patch\n`;
export const PATCH_ANSWER = `Created ${PATCH_FILE}.`;

/** Throws when `apply_patch` is missing or was not turned into a function of one string `input`. */
export function patchCall(tools: readonly DeclaredTool[]): { name: string; arguments: Record<string, unknown> } {
  const tool = tools.find((candidate) => candidate.name === 'apply_patch');
  if (tool === undefined) throw new Error(`No apply_patch tool among: ${tools.map((candidate) => candidate.name).join(', ')}`);
  const schema = tool.schema;
  const properties = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {};
  if (Object.keys(properties).join() !== 'input' || !isRecord(properties.input) || properties.input.type !== 'string') {
    throw new Error(`apply_patch does not take one string 'input': ${JSON.stringify(schema)}`);
  }
  return { name: 'apply_patch', arguments: { input: PATCH } };
}
