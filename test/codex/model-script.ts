/**
 * The scripted model behind both upstream doubles, independent of wire format: each double reads
 * its request into a {@link Conversation} and writes the {@link ScriptedTurn} in its own format.
 * The test reads the recorded requests through the same readers.
 */
import { PATCH_ANSWER, PATCH_FILE, patchCall } from './patch-call.js';
import { FINAL_ANSWER, shellCall, type DeclaredTool, type ShellCall } from './shell-call.js';

/** A request as the model sees it, whatever the wire format. */
export interface Conversation {
  /** The system/developer text (Codex's instructions). */
  instructions: string;
  /** The text of every user message, joined. */
  userText: string;
  /** Tool calls the model made earlier, replayed in the history; `arguments` parsed. */
  calls: Array<{ id: unknown; name: unknown; arguments: unknown }>;
  /** Tool outputs in the history. */
  outputs: Array<{ callId: unknown; text: string }>;
  tools: DeclaredTool[];
}

/** What the scripted model does on one request. */
export type ScriptedTurn = { kind: 'text'; text: string } | { kind: 'call'; call: ShellCall };

/**
 * Turn 1 calls the shell (or, when the user asks for the patch file, `apply_patch`); once the
 * output is back, the model answers.
 */
export function scriptedTurn(conversation: Conversation): ScriptedTurn {
  const patching = conversation.userText.includes(PATCH_FILE);
  if (conversation.outputs.length > 0) return { kind: 'text', text: patching ? PATCH_ANSWER : FINAL_ANSWER };
  return { kind: 'call', call: patching ? patchCall(conversation.tools) : shellCall(conversation.tools) };
}

/** Arguments as JSON text parsed, or the text itself when it is not JSON. */
export function parseArguments(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
