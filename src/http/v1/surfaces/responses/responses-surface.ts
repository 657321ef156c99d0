/**
 * The Responses surface (`POST /v1/responses`): its decoding, its model checks (reasoning effort,
 * the model's hosted-tools policy), its conversation state (a `previous_response_id` expanded, a
 * `store`d answer kept: conversation-state.ts), its encoder and its failure frame.
 */
import { GatewayError } from '../../../../errors/gateway-error.js';
import { idSuffix, newItemId } from '../../../../lib/ids.js';
import type { CanonicalRequest } from '../../../../protocol/canonical.js';
import { decodeResponsesBody } from '../../../../protocol/responses/decode-request.js';
import { unsupportedHostedTool } from '../../../../protocol/responses/decode-tools.js';
import { ResponsesEncoder } from '../../../../protocol/responses/encoder.js';
import { failedResponse, responsesFailureFrame } from '../../../../protocol/responses/failure-frame.js';
import { effortFor } from '../../../../routing/catalog.js';
import { withHostedToolPolicy } from '../hosted-tool-policy.js';
import type { SurfaceAdapter } from '../surface.js';
import { createResponseKeeper, expandConversation, passthroughResponse } from './conversation-state.js';
import type { ResponsesExtras, ResponseStore } from './responses-extras.js';

export interface ResponsesSurfaceDeps {
  /** Stored responses (`store` and `previous_response_id`). */
  store: ResponseStore;
  now: () => number;
}

export function createResponsesSurface(deps: ResponsesSurfaceDeps): SurfaceAdapter<ResponsesExtras> {
  return {
    surface: 'responses',
    decode(body) {
      const { request, store, previousResponseId, metadata, echo } = decodeResponsesBody(body);
      return { request, clientWantsUsage: true, extras: { store, previousResponseId, metadata, echo } };
    },
    checkAgainstModel(decoded, model) {
      const policed = withHostedToolPolicy(decoded.request, model, 'responses', unsupportedHostedTool);
      const effort = policed.reasoningEffort;
      const use = effort === undefined ? 'use' : effortFor(model, effort);
      if (use === 'refuse') {
        const allowed = [...model.reasoningEfforts];
        const message =
          allowed.length === 0
            ? `Reasoning effort is not supported with the model '${model.id}'.`
            : `Unsupported value: '${effort}' is not supported with the model '${model.id}'. Supported values are: ${allowed.map((value) => `'${value}'`).join(', ')}.`;
        throw new GatewayError('invalid_request', { message, param: 'reasoning.effort', code: 'unsupported_value' });
      }
      const request = use === 'drop' ? withoutEffort(policed) : policed;
      return request === decoded.request ? decoded : { ...decoded, request };
    },
    // Before the hold, so that it covers the whole conversation the upstream will read.
    async prepare(decoded, { accountId, log }) {
      const conversation = await expandConversation(deps.store, accountId, decoded);
      const keep = decoded.extras.store
        ? createResponseKeeper({ store: deps.store, accountId, inputItems: conversation.inputItems, now: deps.now, log })
        : undefined;
      return { decoded: conversation.decoded, expanded: decoded.extras.previousResponseId !== null, keep };
    },
    passthroughResponse,
    createEncoder(decoded, createdAt) {
      const { store, metadata, previousResponseId, echo } = decoded.extras;
      const encoder = new ResponsesEncoder({
        responseId: `resp_${idSuffix()}`,
        createdAt,
        model: decoded.request.model,
        request: decoded.request,
        stream: decoded.request.stream,
        store,
        metadata,
        previousResponseId,
        idGenerator: newItemId,
        echo,
      });
      return {
        start: () => encoder.start(),
        push: (event) => encoder.push(event),
        finish: (usage) => encoder.finish(usage),
        fail: (error, usage) => encoder.fail(error.wireCode, error.message, usage),
        body: () => encoder.response(),
      };
    },
    // The frame the encoder's `fail` ends with too (protocol/responses/failure-frame.ts).
    passthroughFailure(error, failure, usage) {
      const told = { code: error.wireCode, message: error.message, param: error.param };
      const response = failure.response === undefined ? undefined : failedResponse(failure.response, told, usage);
      const sse = responsesFailureFrame(told, failure.sequenceNumber ?? 0, response);
      return response === undefined ? { sse } : { sse, response };
    },
  };
}

/** The request without its effort (`none` on a model that does not reason). */
function withoutEffort(request: CanonicalRequest): CanonicalRequest {
  const { reasoningEffort: _dropped, ...rest } = request;
  return rest;
}
