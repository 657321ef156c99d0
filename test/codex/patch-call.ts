/**
 * The second thing the scripted models can do: create a file with Codex's patch format. How
 * depends on the tools Codex declared (see shell-call.ts): a free-form `apply_patch` tool, code
 * mode's `tools.apply_patch(…)`, or, for a model Codex has no metadata for, `apply_patch` run
 * through the shell tool, which Codex intercepts and applies itself.
 */
import { assertOneStringInput, codeModeCall, codeModeTool, commandCall, type DeclaredTool, type ToolCall } from './shell-call.js';

/** A prompt that mentions this file asks for the patch instead of the shell command. */
export const PATCH_FILE = 'tollgate-note.txt';
export const PATCH_FILE_TEXT = 'written through tollgate';
export const PATCH = `*** Begin Patch\n*** Add File: ${PATCH_FILE}\n+${PATCH_FILE_TEXT}\n*** End Patch\n`;
export const PATCH_ANSWER = `Created ${PATCH_FILE}.`;

export function patchCall(tools: readonly DeclaredTool[]): ToolCall {
  const freeForm = tools.find((candidate) => candidate.name === 'apply_patch' && candidate.namespace === undefined);
  if (freeForm !== undefined) {
    if (freeForm.custom !== true) assertOneStringInput(freeForm);
    return { name: 'apply_patch', arguments: { input: PATCH }, custom: true };
  }
  if (codeModeTool(tools) !== undefined) return codeModeCall(tools, `await tools.apply_patch(${JSON.stringify(PATCH)});\ntext("patched");`);
  return commandCall(tools, `apply_patch <<'EOF'\n${PATCH}EOF\n`);
}
