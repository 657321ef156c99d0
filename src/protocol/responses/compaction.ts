/**
 * Compaction on routes that cannot compact themselves (docs/wire-protocols.md §23): the
 * request a `compaction_trigger` turns into (the conversation so far and our instruction to write a
 * handoff summary, no tools), the `compaction` item the answer becomes, the message a summary is
 * read back as, and the user messages `/v1/responses/compact` keeps. Sealing the summary is the
 * caller's: this file only says where the sealed text goes.
 */
import type { CanonicalRequest, ContentPart, InputItem } from '../canonical.js';

/** The instruction appended, as the last user message, to the conversation being compacted. */
export const COMPACTION_INSTRUCTION = [
  'The conversation above is about to be replaced by a summary, because it no longer fits in the context window.',
  'Write that summary now: a handoff note from which another model, which will see only this note and the user messages, can continue the work without asking again.',
  'Cover: the goals and the constraints the user set; the decisions taken and why; the files, commands and other resources touched, with what changed in each; the current state (what works, what fails, what is half done); and the next steps, in order.',
  'Keep exact names, paths, identifiers, error messages and numbers. Leave out greetings and anything that no longer matters.',
  'Answer with the summary only, as plain text: do not call tools and do not address the user.',
].join('\n');

/** The label the summary is sealed under, so that a sealed text made for something else does not open as one. */
export const COMPACTION_SEAL_PURPOSE = 'tollgate/compaction/v1';

/** How a compaction item's summary is given back to the model in a later request. */
export function summaryMessageText(summary: string): string {
  return `Summary of the conversation so far (earlier turns were compacted into it; continue from it):\n\n${summary}`;
}

/** The Responses input item a summary is read back as (a user message). */
export function summaryInputItem(summary: string): Record<string, unknown> {
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text: summaryMessageText(summary) }] };
}

/**
 * The request the model answers to make the summary: the conversation before the trigger, its
 * tool calls and results written out as text (an upstream refuses tool blocks without tools), then
 * the instruction; no tools, no response format. The instructions and the effort stay.
 */
export function compactionRequest(request: CanonicalRequest): CanonicalRequest {
  const { hostedTools: _hosted, mapHostedTools: _map, responseFormat: _format, parallelToolCalls: _parallel, ...rest } = request;
  const input: InputItem[] = request.input.map(asText);
  input.push({ type: 'message', role: 'user', content: [{ type: 'text', text: COMPACTION_INSTRUCTION }] });
  return { ...rest, input, tools: [], toolChoice: 'auto' };
}

/** Tool calls and their results as messages of the role that carried them. */
function asText(item: InputItem): InputItem {
  switch (item.type) {
    case 'message':
      return item;
    case 'function_call':
      return { type: 'message', role: 'assistant', content: [textPart(`[called the tool ${item.name} (call ${item.callId}) with ${item.arguments}]`)] };
    case 'function_call_output':
      return { type: 'message', role: 'user', content: [textPart(`[result of call ${item.callId}]\n${item.output}`)] };
  }
}

function textPart(text: string): ContentPart {
  return { type: 'text', text };
}

/** The output item a compaction is, as OpenAI writes it. */
export function compactionItem(id: string, encryptedContent: string): Record<string, unknown> {
  return { id, type: 'compaction', encrypted_content: encryptedContent };
}

/**
 * The items of a `/v1/responses/compact` input that its answer keeps before the compaction item:
 * the user messages, as the client sent them (OpenAI: "all user messages, followed by a single
 * compaction item"). A string input is one user message.
 */
export function retainedUserMessages(input: unknown): Array<Record<string, unknown>> {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  if (!Array.isArray(input)) return [];
  return input.filter(
    (item): item is Record<string, unknown> =>
      typeof item === 'object' && item !== null && !Array.isArray(item) && (item as Record<string, unknown>).role === 'user' && ((item as Record<string, unknown>).type ?? 'message') === 'message',
  );
}
