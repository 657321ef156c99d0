/**
 * The scripted model behind every upstream double, independent of wire format: each double reads
 * its request into a {@link Conversation} and writes the {@link ScriptedTurn} in its own format.
 * The test reads the recorded requests through the same readers. Runs go on concurrently, so each
 * prompt carries a tag that tells its requests apart.
 */
import { COMPACTION_INSTRUCTION } from '../../src/protocol/responses/compaction.js';
import { PATCH_ANSWER, PATCH_FILE, patchCall } from './patch-call.js';
import { FINAL_ANSWER, shellCall, type DeclaredTool, type ToolCall } from './shell-call.js';

/** A request as the model sees it, whatever the wire format. */
export interface Conversation {
  /** The system/developer text (Codex's instructions). */
  instructions: string;
  /** The text of every user message, joined. */
  userText: string;
  /** Tool calls the model made earlier, replayed in the history; `arguments` parsed. */
  calls: Array<{ id: unknown; name: unknown; namespace?: unknown; arguments: unknown }>;
  /** Tool outputs in the history. */
  outputs: Array<{ callId: unknown; text: string }>;
  tools: DeclaredTool[];
  /** The reasoning the request asks for, in the upstream's own terms (undefined: none). */
  reasoning: unknown;
  /** A Responses request that ends with a `compaction_trigger` (only a pass-through's upstream sees one). */
  compactionTrigger?: boolean;
}

/** What the scripted model does on one request; `thinking` is reasoning text to stream first. */
export type ScriptedTurn = ({ kind: 'text'; text: string } | { kind: 'call'; call: ToolCall }) & { thinking?: string };

/** A prompt containing this asks for the shell command. */
export const SHELL_TASK = 'Run `echo tollgate-ok` in the shell';
export const PLAIN_ANSWER = 'Hello from the scripted model.';
export const THINKING = 'The user wants a greeting.';
/** The scripted model's handoff summary when it is asked to compact (its mark tells it apart later). */
export const COMPACTION_SUMMARY = 'Handoff: the shell command ran and printed tollgate-ok. [compacted-history]';
/** The answer of a model that read the summary rather than the history it replaced. */
export const AFTER_COMPACTION_ANSWER = 'From the compacted history: the command printed tollgate-ok.';

/**
 * The model is asked to compact: by the gateway's instruction on a translated route (the
 * conversation so far, then our instruction), or by the trigger item on a pass-through.
 */
export function asksToCompact(conversation: Conversation): boolean {
  return conversation.compactionTrigger === true || conversation.userText.includes(COMPACTION_INSTRUCTION.split('\n')[0]!);
}

/**
 * Turn 1 calls the shell (or the patch tool, when the user asks for the patch file), or answers at
 * once when asked for neither; once a tool's output is back, the model answers. A request that
 * asks for reasoning gets some before the answer. Asked to compact, the model writes its summary;
 * given that summary instead of the history, it answers from the summary.
 */
export function scriptedTurn(conversation: Conversation): ScriptedTurn {
  const thinking = conversation.reasoning === undefined ? {} : { thinking: THINKING };
  // Asked to compact: the summary. Given a summary in place of the history: an answer from it.
  if (asksToCompact(conversation)) return { kind: 'text', text: COMPACTION_SUMMARY };
  if (conversation.userText.includes('[compacted-history]')) return { kind: 'text', text: AFTER_COMPACTION_ANSWER, ...thinking };
  const patching = conversation.userText.includes(PATCH_FILE);
  if (conversation.outputs.length > 0) return { kind: 'text', text: patching ? PATCH_ANSWER : FINAL_ANSWER, ...thinking };
  if (patching) return { kind: 'call', call: patchCall(conversation.tools), ...thinking };
  if (conversation.userText.includes(SHELL_TASK)) return { kind: 'call', call: shellCall(conversation.tools), ...thinking };
  return { kind: 'text', text: PLAIN_ANSWER, ...thinking };
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
