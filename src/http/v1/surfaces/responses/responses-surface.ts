/**
 * The Responses surface (`POST /v1/responses`): its decoding (sealed compaction items opened:
 * sealed-compaction.ts), its model checks (reasoning effort, the model's hosted-tools policy, an
 * OpenAI compaction item where an upstream cannot read it), its conversation state (a
 * `previous_response_id` expanded, a `store`d answer kept: conversation-state.ts), a compaction's
 * request (protocol/responses/compaction.ts), its encoder and its failure frame.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../../../errors/gateway-error.js';
import { idSuffix, newItemId } from '../../../../lib/ids.js';
import type { Sealer } from '../../../../lib/seal.js';
import type { CanonicalRequest } from '../../../../protocol/canonical.js';
import { COMPACTION_INSTRUCTION, compactionRequest } from '../../../../protocol/responses/compaction.js';
import { decodeResponsesBody } from '../../../../protocol/responses/decode-request.js';
import { unsupportedHostedTool } from '../../../../protocol/responses/decode-tools.js';
import { ResponsesEncoder } from '../../../../protocol/responses/encoder.js';
import { failedResponse, responsesFailureFrame } from '../../../../protocol/responses/failure-frame.js';
import { countTextTokens } from '../../../../protocol/tokens.js';
import { effortFor, type ModelEntry } from '../../../../routing/catalog.js';
import { withHostedToolPolicy } from '../hosted-tool-policy.js';
import type { AnswerScope, Decoded, PassthroughEnding, Prepared, SurfaceAdapter } from '../surface.js';
import { createResponseKeeper, expandConversation, passthroughResponse } from './conversation-state.js';
import type { DecodedResponses, ResponsesExtras, ResponseStore } from './responses-extras.js';
import { foreignCompactionPath, openSealedCompactions, openStoredCompactions, resealSummaries, sealSummary } from './sealed-compaction.js';

export interface ResponsesSurfaceDeps {
  /** Stored responses (`store` and `previous_response_id`). */
  store: ResponseStore;
  now: () => number;
  /** Seals the summaries of the compactions the gateway makes, and opens them when they come back. */
  sealer: Sealer;
}

export function createResponsesSurface(deps: ResponsesSurfaceDeps): SurfaceAdapter<ResponsesExtras> {
  return {
    surface: 'responses',
    decode: (body, headers) => decodeResponses(body, headers, deps.sealer),
    checkAgainstModel: checkResponsesAgainstModel,
    // Before the hold, so that it covers the whole conversation the upstream will read.
    prepare: (decoded, scope) => prepareResponses(decoded, scope, deps),
    passthroughResponse,
    createEncoder(decoded, createdAt) {
      const encoder = responsesEncoder(decoded, createdAt, deps.sealer);
      return {
        start: () => encoder.start(),
        push: (event) => encoder.push(event),
        finish: (usage) => encoder.finish(usage),
        fail: (error, usage) => encoder.fail(error.wireCode, error.message, usage),
        body: () => encoder.response(),
      };
    },
    passthroughFailure: responsesPassthroughFailure,
  };
}

/**
 * A Responses body decoded: sealed compaction items opened first (the body the upstream gets
 * holds their summaries instead), then the body decoded as any other.
 */
const NO_SEALED_SUMMARIES: ReadonlyMap<string, Record<string, unknown>> = new Map();

export function decodeResponses(body: unknown, _headers: IncomingHttpHeaders, sealer: Sealer): DecodedResponses {
  const opened = openSealedCompactions(body, sealer);
  const read = opened?.body ?? body;
  const { request, store, previousResponseId, metadata, echo, compact } = decodeResponsesBody(read);
  const sealedSummaries = opened?.sealedBySummary ?? NO_SEALED_SUMMARIES;
  const extras: ResponsesExtras = { store, previousResponseId, metadata, echo, compact, foreignCompaction: foreignCompactionPath(read), sealedSummaries };
  return opened === undefined ? { request, clientWantsUsage: true, extras } : { request, clientWantsUsage: true, extras, body: opened.body };
}

export function checkResponsesAgainstModel(decoded: DecodedResponses, model: ModelEntry): DecodedResponses {
  refuseForeignCompaction(decoded, model);
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
}

/**
 * The conversation expanded (and a keeper when it is stored); a compaction's request made from the
 * whole of it, which translated routes answer (a pass-through forwards the client's trigger).
 */
export async function prepareResponses(decoded: DecodedResponses, { accountId, log }: AnswerScope, deps: Pick<ResponsesSurfaceDeps, 'store' | 'now' | 'sealer'>): Promise<Prepared<ResponsesExtras>> {
  const conversation = await expandConversation(deps.store, accountId, decoded, (items) => openStoredCompactions(items, deps.sealer));
  // Stored, a summary stays sealed: reading the conversation back shows the item, not the summary.
  const inputItems = resealSummaries(conversation.inputItems, decoded.extras.sealedSummaries);
  const keep = decoded.extras.store ? createResponseKeeper({ store: deps.store, accountId, inputItems, now: deps.now, log }) : undefined;
  const expanded = decoded.extras.previousResponseId !== null;
  if (!decoded.extras.compact) return { decoded: conversation.decoded, expanded, keep };
  const request = compactionRequest(conversation.decoded.request);
  return { decoded: { ...conversation.decoded, request }, expanded, keep, addedInputTokens: compactionAddedTokens(request) };
}

/** The instruction, and the words each tool call or result is written out with, beyond the body. */
function compactionAddedTokens(request: CanonicalRequest): number {
  return countTextTokens(COMPACTION_INSTRUCTION) + 16 * request.input.length;
}

export function responsesEncoder(decoded: DecodedResponses, createdAt: number, sealer: Sealer): ResponsesEncoder {
  const { store, metadata, previousResponseId, echo, compact } = decoded.extras;
  return new ResponsesEncoder({
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
    ...(compact ? { compaction: { seal: sealSummary(sealer) } } : {}),
  });
}

/** The frame the encoder's `fail` ends with too (protocol/responses/failure-frame.ts). */
export const responsesPassthroughFailure: PassthroughEnding['passthroughFailure'] = (error, failure, usage) => {
  const told = { code: error.wireCode, message: error.message, param: error.param };
  const response = failure.response === undefined ? undefined : failedResponse(failure.response, told, usage);
  const sse = responsesFailureFrame(told, failure.sequenceNumber ?? 0, response);
  return response === undefined ? { sse } : { sse, response };
};

/**
 * An OpenAI compaction item holds what only OpenAI can read: refused (400 at its place) when any
 * target of the model would translate the request, as a hosted tool is under `refuse`.
 */
function refuseForeignCompaction(decoded: Decoded<ResponsesExtras>, model: ModelEntry): void {
  const path = decoded.extras.foreignCompaction;
  if (path === null || !model.targets.some(translates)) return;
  throw new GatewayError('invalid_request', {
    message: `The compaction item at '${path}' was made by another service, and the model '${model.id}' is served by an upstream that cannot read it. Send the conversation it replaced instead.`,
    param: path,
    code: 'unsupported_value',
  });
}

function translates(target: ModelEntry['targets'][number]): boolean {
  return target.provider.speaksNatively?.('responses') !== true;
}
/** The request without its effort (`none` on a model that does not reason). */
function withoutEffort(request: CanonicalRequest): CanonicalRequest {
  const { reasoningEffort: _dropped, ...rest } = request;
  return rest;
}
