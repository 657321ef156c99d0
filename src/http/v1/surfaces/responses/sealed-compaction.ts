/**
 * The gateway's side of Responses compaction (docs/wire-protocols.md §23): the summary of
 * a compaction the gateway made is sealed (lib/seal.ts) into the item's `encrypted_content`, and a
 * sealed item that comes back in a later request is opened into a user message carrying the
 * summary, in the body itself, before any upstream sees it (a Responses upstream cannot read our
 * seal either). Items not sealed by a gateway (OpenAI's own) are left where they are.
 */
import { GatewayError } from '../../../../errors/gateway-error.js';
import { isSealed, UnsealError, type Sealer } from '../../../../lib/seal.js';
import { COMPACTION_SEAL_PURPOSE, summaryInputItem, summaryMessageText } from '../../../../protocol/responses/compaction.js';
import type { ResponsesInputItem } from '../../../../protocol/responses/input-items.js';

/** Seals one summary as a compaction item's `encrypted_content`. */
export function sealSummary(sealer: Sealer): (summary: string) => string {
  return (summary) => sealer.seal(summary, COMPACTION_SEAL_PURPOSE);
}

/** A body whose sealed items were opened, and each summary's text with the item it came sealed in. */
export interface OpenedCompactions {
  body: Record<string, unknown>;
  /**
   * The summary messages' text (summaryMessageText), each with its sealed item: what a stored
   * conversation keeps in the message's place, so that reading it back shows no summary.
   */
  sealedBySummary: ReadonlyMap<string, Record<string, unknown>>;
}

/**
 * The body with each sealed `compaction` item of its `input` replaced by the summary's message,
 * every other byte kept; undefined when it holds none. A sealed item that does not open (altered,
 * or sealed under another key: another gateway, or a process whose random key is gone) is the
 * client's 400 at `input[i]`.
 */
export function openSealedCompactions(body: unknown, sealer: Sealer): OpenedCompactions | undefined {
  if (!isObject(body) || !Array.isArray(body.input)) return undefined;
  const input: unknown[] = body.input;
  let opened: unknown[] | undefined;
  const sealedBySummary = new Map<string, Record<string, unknown>>();
  input.forEach((item, index) => {
    if (!isObject(item) || item.type !== 'compaction' || typeof item.encrypted_content !== 'string' || !isSealed(item.encrypted_content)) return;
    let summary: string;
    try {
      summary = sealer.open(item.encrypted_content, COMPACTION_SEAL_PURPOSE);
    } catch (error) {
      if (!(error instanceof UnsealError)) throw error;
      throw new GatewayError('invalid_request', {
        message: `The compaction item at 'input[${index}]' could not be read: it was altered, or sealed by another gateway or under a key this one no longer has. Send the conversation again without it.`,
        param: `input[${index}]`,
        code: 'invalid_encrypted_content',
      });
    }
    opened ??= [...input];
    opened[index] = summaryInputItem(summary);
    sealedBySummary.set(summaryMessageText(summary), item);
  });
  return opened === undefined ? undefined : { body: { ...body, input: opened }, sealedBySummary };
}

/**
 * Stored input items with each opened summary's message put back as the sealed item it came as
 * (its stored id kept), so that `GET /v1/responses/{id}/input_items` shows no summary; a later
 * `previous_response_id` opens it again (openStoredCompactions).
 */
export function resealSummaries(items: ResponsesInputItem[], sealedBySummary: ReadonlyMap<string, Record<string, unknown>>): ResponsesInputItem[] {
  if (sealedBySummary.size === 0) return items;
  return items.map((item) => {
    const text = summaryTextOf(item);
    const sealed = text === undefined ? undefined : sealedBySummary.get(text);
    return sealed === undefined ? item : { ...sealed, id: item.id };
  });
}

/** Stored input items with their sealed compaction items opened into summary messages. */
export function openStoredCompactions(items: ResponsesInputItem[], sealer: Sealer): ResponsesInputItem[] {
  const opened = openSealedCompactions({ input: items }, sealer);
  return opened === undefined ? items : (opened.body.input as ResponsesInputItem[]);
}

/** The text of a user message with one text part, as a summary message is written. */
function summaryTextOf(item: ResponsesInputItem): string | undefined {
  if (item.type !== 'message' || item.role !== 'user' || !Array.isArray(item.content) || item.content.length !== 1) return undefined;
  const part: unknown = item.content[0];
  return isObject(part) && typeof part.text === 'string' ? part.text : undefined;
}

/** The path of the first compaction item left in the input (one the gateway did not seal), or null. */
export function foreignCompactionPath(body: unknown): string | null {
  if (!isObject(body) || !Array.isArray(body.input)) return null;
  const index = body.input.findIndex((item) => isObject(item) && item.type === 'compaction');
  return index < 0 ? null : `input[${index}]`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
