/**
 * `POST /v1/responses/compact` (docs/wire-protocols.md §23): older Codex builds and
 * OpenAI's SDKs compact a conversation with it. Part of the Responses surface (the model's
 * `endpoints` name `responses`). A pass-through forwards the body to the upstream's own
 * `/responses/compact`; a translated route makes the compaction as `/v1/responses` does for a
 * `compaction_trigger` (the body decoded as a create whose input ends with one), and answers
 * OpenAI's `response.compaction` object: the input's user messages, then the one compaction item.
 * https://platform.openai.com/docs/api-reference/responses/compact
 */
import { GatewayError } from '../../../../errors/gateway-error.js';
import { retainedUserMessages } from '../../../../protocol/responses/compaction.js';
import type { SurfaceAdapter } from '../surface.js';
import type { ResponsesExtras } from './responses-extras.js';
import { checkResponsesAgainstModel, decodeResponses, prepareResponses, responsesEncoder, responsesPassthroughFailure, type ResponsesSurfaceDeps } from './responses-surface.js';

/** A compaction's extras: those of a Responses create, and the user messages its answer keeps. */
export interface CompactExtras extends ResponsesExtras {
  retained: Array<Record<string, unknown>>;
}

/** Fields of a compact body that a create does not take: forwarded on a pass-through, unused otherwise. */
const COMPACT_ONLY_FIELDS = ['prompt_cache_options', 'prompt_cache_retention'] as const;

export function createCompactSurface(deps: ResponsesSurfaceDeps): SurfaceAdapter<CompactExtras> {
  return {
    surface: 'responses',
    passthroughEndpoint: 'compact',
    decode(body, headers) {
      const create = asCreateBody(body);
      const decoded = decodeResponses(create, headers, deps.sealer);
      // A pass-through forwards the compact body (its sealed items opened), not the create made of it.
      const opened = decoded.body === undefined ? undefined : compactBody(body, decoded.body);
      // Kept from the client's own input: an earlier summary of ours stays sealed, inside the new one.
      const extras: CompactExtras = { ...decoded.extras, retained: retainedUserMessages((body as Record<string, unknown>).input) };
      return { request: decoded.request, clientWantsUsage: true, extras, ...(opened === undefined ? {} : { body: opened }) };
    },
    checkAgainstModel: (decoded, model) => {
      const checked = checkResponsesAgainstModel(decoded, model);
      return checked === decoded ? decoded : { ...decoded, request: checked.request };
    },
    async prepare(decoded, scope) {
      const prepared = await prepareResponses(decoded, scope, deps);
      return { ...prepared, decoded: { ...prepared.decoded, extras: decoded.extras } };
    },
    createEncoder(decoded, createdAt) {
      const encoder = responsesEncoder(decoded, createdAt, deps.sealer);
      const compacted = (): Record<string, unknown> => {
        const response = encoder.response();
        return {
          id: response.id,
          object: 'response.compaction',
          created_at: createdAt,
          output: [...decoded.extras.retained, ...(Array.isArray(response.output) ? response.output : [])],
          usage: response.usage,
        };
      };
      return {
        start: () => encoder.start(),
        push: (event) => encoder.push(event),
        finish: (usage) => encoder.finish(usage),
        fail: (error, usage) => encoder.fail(error.wireCode, error.message, usage),
        body: compacted,
      };
    },
    passthroughFailure: responsesPassthroughFailure,
  };
}

/**
 * The compact body as the create it asks for: not streamed, not stored, its input ended by a
 * trigger. A field neither endpoint takes is refused by the create's decoder, as OpenAI refuses it.
 */
function asCreateBody(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  if (record.stream !== undefined) {
    throw new GatewayError('invalid_request', { message: "Unknown parameter: 'stream'. A compaction is answered whole.", param: 'stream', code: 'unknown_parameter' });
  }
  if (record.store !== undefined) {
    throw new GatewayError('invalid_request', { message: "Unknown parameter: 'store'. A compaction is never stored.", param: 'store', code: 'unknown_parameter' });
  }
  const create: Record<string, unknown> = { ...record, stream: false, store: false, input: createInput(record.input) };
  for (const field of COMPACT_ONLY_FIELDS) delete create[field];
  return create;
}

/** The input with the trigger after it; an input of another type is left for the decoder to refuse at `input`. */
function createInput(input: unknown): unknown {
  const trigger = { type: 'compaction_trigger' };
  if (input === undefined || input === null) return [trigger];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }, trigger];
  return Array.isArray(input) ? [...input, trigger] : input;
}

/** The client's compact body with the input of the opened create body (its trigger left out). */
function compactBody(body: unknown, opened: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const input = Array.isArray(opened.input) ? opened.input.slice(0, -1) : opened.input;
  return { ...(body as Record<string, unknown>), input };
}
