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
  /** The input ends with a `compaction_trigger`: translated routes answer with one compaction item. */
  compact: boolean;
  /** Where the input holds a compaction item the gateway did not seal (OpenAI's), or null. */
  foreignCompaction: string | null;
  /** The summaries of the sealed compaction items the input held, each with its item (sealed-compaction.ts). */
  sealedSummaries: ReadonlyMap<string, Record<string, unknown>>;
}

export type DecodedResponses = Decoded<ResponsesExtras>;

/** The stored responses of an account. */
export type ResponseStore = Pick<OperationsStore, 'findResponse' | 'saveResponse' | 'deleteResponse'>;
