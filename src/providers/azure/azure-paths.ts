/**
 * Where each call of an `azure` provider goes under its resource address, as the vendor's own
 * client builds them (docs/wire-protocols.md §17.1):
 *
 * - `deployments`: `/openai/deployments/{deployment}/{endpoint}?api-version=…`, the deployment
 *   being the target's `model`; but `/responses`, which Azure serves beside the deployments
 *   (`/openai/responses?api-version=…`) with the deployment named by the body's `model`.
 * - `v1`: `/openai/v1/{endpoint}`, the deployment named by the body's `model`; `api-version` only
 *   when the catalog sets one.
 */
import type { EndpointPath, OpenAIEndpoint } from '../openai/endpoint-path.js';

/** The endpoints Azure serves under a deployment's address (docs/wire-protocols.md §17.1). */
const DEPLOYMENT_ENDPOINTS: ReadonlySet<OpenAIEndpoint> = new Set(['/chat/completions', '/embeddings', '/audio/speech', '/audio/transcriptions', '/audio/translations', '/images/generations', '/images/edits']);

export interface AzureAddressing {
  url_form: 'deployments' | 'v1';
  api_version?: string | undefined;
}

export function azurePaths(config: AzureAddressing): EndpointPath {
  const query = config.api_version === undefined ? '' : `?api-version=${encodeURIComponent(config.api_version)}`;
  if (config.url_form === 'v1') return (endpoint) => `/openai/v1${endpoint}${query}`;
  return (endpoint, upstreamModel) => (DEPLOYMENT_ENDPOINTS.has(endpoint) ? `/openai/deployments/${encodeURIComponent(upstreamModel)}${endpoint}${query}` : `/openai${endpoint}${query}`);
}
