/**
 * The gateway's side of Responses compaction (docs/wire-protocols.md §23): the summary of
 * a compaction the gateway made is sealed (lib/seal.ts) into the item's `encrypted_content`, and a
 * sealed item that comes back in a later request is opened into a user message carrying the
 * summary, in the body itself, before any upstream sees it (a Responses upstream cannot read our
 * seal either). Items not sealed by a gateway (OpenAI's own) are left where they are.
 */
import { GatewayError } from '../../../../errors/gateway-error.js';
import { isSealed, UnsealError, type Sealer } from '../../../../lib/seal.js';
import { COMPACTION_SEAL_PURPOSE, summaryInputItem } from '../../../../protocol/responses/compaction.js';

/** Seals one summary as a compaction item's `encrypted_content`. */
export function sealSummary(sealer: Sealer): (summary: string) => string {
  return (summary) => sealer.seal(summary, COMPACTION_SEAL_PURPOSE);
}

/**
 * The body with each sealed `compaction` item of its `input` replaced by the summary's message,
 * every other byte kept; undefined when it holds none. A sealed item that does not open (altered,
 * or sealed under another key: another gateway, or a process whose random key is gone) is the
 * client's 400 at `input[i]`.
 */
export function openSealedCompactions(body: unknown, sealer: Sealer): Record<string, unknown> | undefined {
  if (!isObject(body) || !Array.isArray(body.input)) return undefined;
  const input: unknown[] = body.input;
  let opened: unknown[] | undefined;
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
  });
  return opened === undefined ? undefined : { ...body, input: opened };
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
