/**
 * What a Responses request carries beside its canonical request, and the part of the store its
 * surface uses (stored responses: `store`, `previous_response_id`, GET and DELETE).
 */
import type { ResponsesEcho } from '../../../../protocol/responses/response-settings.js';
import type { OperationsStore } from '../../../../store/store.js';
import type { Decoded } from '../surface.js';

export interface ResponsesExtras {
  /** Persist the response (`store`, default true). */
  store: boolean;
  /** The stored response this one continues. */
  previousResponseId: string | null;
  /** At most 16 string pairs, stored and echoed. */
  metadata: Record<string, string>;
  /** Request settings the response object echoes. */
  echo: ResponsesEcho;
}

export type DecodedResponses = Decoded<ResponsesExtras>;

/** The stored responses of an account. */
export type ResponseStore = Pick<OperationsStore, 'findResponse' | 'saveResponse' | 'deleteResponse'>;
