/**
 * Responses `store` and `previous_response_id` for the creation handler (docs/wire-protocols.md §2.1,
 * §3.1): a request that continues a stored response is expanded into the whole conversation
 * (stored input items + stored output items + new input; the old `instructions` are not carried
 * over), so any upstream can answer it; and a stored answer is saved with that conversation before
 * its final event leaves, so a client that reads it back right after the stream never misses it.
 */
import type { FastifyBaseLogger } from 'fastify';
import { GatewayError } from '../../../../errors/gateway-error.js';
import { newItemId } from '../../../../lib/ids.js';
import { clipEcho } from '../../../../protocol/client-echo.js';
import { InvalidRequestError, type InputItem } from '../../../../protocol/canonical.js';
import { decodeInput } from '../../../../protocol/responses/decode-input.js';
import { encodeInputItems, outputItemsAsInputItems, type ResponsesInputItem } from '../../../../protocol/responses/input-items.js';
import type { KeepResponse } from '../surface.js';
import type { DecodedResponses, ResponseStore } from './responses-extras.js';

export interface ExpandedConversation {
  /** The decoded body whose canonical input now holds the earlier turns before the new input. */
  decoded: DecodedResponses;
  /** The same conversation as Responses input items with ids: what a stored answer keeps. */
  inputItems: ResponsesInputItem[];
}

/**
 * Resolves `previous_response_id` among this account's stored responses; another account's is
 * not found, exactly like an unknown id (OpenAI's 400 `previous_response_not_found`).
 */
export async function expandConversation(
  store: ResponseStore,
  accountId: string,
  decoded: DecodedResponses,
  /** Reads stored items as input (opens the sealed compaction items kept in them); as they are by default. */
  openStored: (items: ResponsesInputItem[]) => ResponsesInputItem[] = (items) => items,
): Promise<ExpandedConversation> {
  const { store: keeps, previousResponseId: previousId } = decoded.extras;
  const newItems = (): ResponsesInputItem[] => (keeps ? encodeInputItems(decoded.request.input, newItemId) : []);
  if (previousId === null) return { decoded, inputItems: newItems() };
  const previous = await store.findResponse(previousId, accountId);
  if (previous === undefined) {
    throw new GatewayError('invalid_request', {
      message: `Previous response with id '${clipEcho(previousId)}' not found.`,
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    });
  }
  const earlierItems = [...previous.inputItems, ...outputItemsAsInputItems(previous.response.output)];
  const earlierInput = decodeStoredItems(openStored(earlierItems), previousId);
  const request = { ...decoded.request, input: [...earlierInput, ...decoded.request.input] };
  // Items kept as they came stay at their places in the new input, now after the earlier turns.
  if (request.opaqueInput !== undefined) request.opaqueInput = request.opaqueInput.map((item) => ({ ...item, index: item.index + earlierInput.length }));
  return { decoded: { ...decoded, request }, inputItems: keeps ? [...earlierItems, ...newItems()] : [] };
}

/** Stored items were valid input when saved; one that no longer decodes is our fault, not the client's. */
function decodeStoredItems(items: ResponsesInputItem[], responseId: string): InputItem[] {
  if (items.length === 0) return [];
  try {
    return decodeInput(items);
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    throw new Error(`stored response ${responseId} has an unreadable item at ${error.param ?? '?'}: ${error.message}`, { cause: error });
  }
}

export interface KeeperOptions {
  store: ResponseStore;
  accountId: string;
  inputItems: ResponsesInputItem[];
  now: () => number;
  log: FastifyBaseLogger;
}

/**
 * The keeper for one stored answer. The answer is delivered even when saving fails: the client has
 * paid for it, and a later GET answering 404 is the smaller harm; the operator sees the error.
 */
export function createResponseKeeper(options: KeeperOptions): KeepResponse {
  let kept = false;
  return async (response) => {
    if (kept) return;
    kept = true;
    const id = response.id;
    if (typeof id !== 'string' || id === '') {
      options.log.warn('not storing a response without an id');
      return;
    }
    try {
      await options.store.saveResponse({
        id,
        accountId: options.accountId,
        response,
        inputItems: options.inputItems,
        createdAt: new Date(options.now()),
      });
    } catch (error) {
      options.log.error({ err: error, responseId: id }, 'storing the response failed');
    }
  };
}

/** A passed-through non-stream Responses body, when it is a response object worth keeping. */
export function passthroughResponse(body: Record<string, unknown>): Record<string, unknown> | undefined {
  return body.object === 'response' && typeof body.id === 'string' ? body : undefined;
}
