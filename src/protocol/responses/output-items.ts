/**
 * The output items a Responses encoder builds, and their wire shapes.
 * https://platform.openai.com/docs/api-reference/responses/object#responses-object-output
 * (docs/wire-protocols.md §2.4). Each item holds only what its final `.done` event must carry in full.
 */
import { compactionItem } from './compaction.js';

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export type OutputItem =
  | { type: 'message'; id: string; status: ItemStatus; text: string }
  /** Reasoning is carried as one summary part, the shape every SDK can rebuild. */
  | { type: 'reasoning'; id: string; status: ItemStatus; text: string }
  /** `namespace` is set for a tool the client declared inside a namespace (`name` is then its name there). */
  | { type: 'function_call'; id: string; status: ItemStatus; callId: string; name: string; namespace?: string; arguments: string }
  /** A call to a custom tool; `arguments` collects the upstream's JSON until `input` can be read from it. */
  | { type: 'custom_tool_call'; id: string; status: ItemStatus; callId: string; name: string; namespace?: string; arguments: string; input: string }
  /** A web search the upstream ran itself (a mapped hosted tool), told once it is done. */
  | { type: 'web_search_call'; id: string; status: ItemStatus; query: string }
  /** A compaction (docs/wire-protocols.md §23): the summary, sealed by the gateway. */
  | { type: 'compaction'; id: string; status: ItemStatus; encryptedContent: string };

export function outputTextPart(text: string): Record<string, unknown> {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

export function summaryTextPart(text: string): Record<string, unknown> {
  return { type: 'summary_text', text };
}

/**
 * The item as the client sees it. `withContent: false` gives the shape of `output_item.added`,
 * sent before its first content or summary part exists.
 */
export function itemObject(item: OutputItem, withContent = true): Record<string, unknown> {
  switch (item.type) {
    case 'message':
      return {
        id: item.id,
        type: 'message',
        status: item.status,
        role: 'assistant',
        content: withContent ? [outputTextPart(item.text)] : [],
      };
    case 'reasoning':
      // OpenAI prints no status on reasoning items; the summary alone tells what was produced.
      return { id: item.id, type: 'reasoning', summary: withContent ? [summaryTextPart(item.text)] : [] };
    case 'function_call':
      return {
        id: item.id,
        type: 'function_call',
        status: item.status,
        arguments: item.arguments,
        call_id: item.callId,
        name: item.name,
        ...namespaceField(item.namespace),
      };
    case 'custom_tool_call':
      return {
        id: item.id,
        type: 'custom_tool_call',
        status: item.status,
        call_id: item.callId,
        name: item.name,
        ...namespaceField(item.namespace),
        input: item.input,
      };
    case 'web_search_call':
      return { id: item.id, type: 'web_search_call', status: item.status, action: { type: 'search', query: item.query } };
    case 'compaction':
      // Complete from its first event: it is added only once its content is known.
      return compactionItem(item.id, item.encryptedContent);
  }
}

function namespaceField(namespace: string | undefined): Record<string, string> {
  return namespace === undefined ? {} : { namespace };
}
