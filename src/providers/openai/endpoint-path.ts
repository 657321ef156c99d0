/**
 * Where an OpenAI-compatible provider sends each call. OpenAI and most compatible servers take every
 * endpoint at one path under their base address; Azure OpenAI puts the deployment (the target's
 * model) and an `api-version` query in the address instead (docs/wire-protocols.md §17.1), so the
 * path is asked of the provider per call rather than written into each endpoint's code.
 */

/** The OpenAI endpoints a compatible provider calls, as their paths under OpenAI's `/v1`. */
export type OpenAIEndpoint =
  | '/chat/completions'
  | '/responses'
  | '/responses/compact'
  | '/embeddings'
  | '/moderations'
  | '/audio/speech'
  | '/audio/transcriptions'
  | '/audio/translations'
  | '/images/generations'
  | '/images/edits';

/** The path (query included) under the client's base address of a call to `endpoint` for `upstreamModel`. */
export type EndpointPath = (endpoint: OpenAIEndpoint, upstreamModel: string) => string;

/** OpenAI's own addressing: the endpoint's path as is, the model in the body. */
export const OPENAI_PATHS: EndpointPath = (endpoint) => endpoint;
