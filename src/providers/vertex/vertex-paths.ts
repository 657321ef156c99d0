/**
 * Vertex AI's addresses (docs/wire-protocols.md §19.1): a regional host
 * (`https://{location}-aiplatform.googleapis.com`) or, for `global`, `https://aiplatform.googleapis.com`,
 * unless the catalog names another; under it `/v1/projects/{project}/locations/{location}/publishers/{publisher}`,
 * the base address of the provider's calls, and each model's methods below that.
 */
import type { VertexProviderConfig } from '../../config/schema.js';

/** The API's host: the catalog's `endpoint`, or Google's address for the location. */
export function vertexEndpoint(config: Pick<VertexProviderConfig, 'endpoint' | 'location'>): string {
  if (config.endpoint !== undefined) return config.endpoint.replace(/\/+$/, '');
  return config.location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${config.location}-aiplatform.googleapis.com`;
}

/** The base address of every call: the publisher's models live under it. */
export function vertexBaseUrl(config: Pick<VertexProviderConfig, 'endpoint' | 'location' | 'project' | 'publisher'>): string {
  return `${vertexEndpoint(config)}/v1/projects/${encodeURIComponent(config.project)}/locations/${encodeURIComponent(config.location)}/publishers/${config.publisher}`;
}

/**
 * `/models/{model}:{method}` under the base address; the catalog may name the model
 * `publishers/…/models/…` or `models/…`. Claude's versions are named `claude-…@20250929`: the `@`
 * stays as it is, as Google's and Anthropic's clients send it.
 */
export function modelMethodPath(upstreamModel: string, method: string): string {
  const model = upstreamModel.replace(/^(publishers\/[^/]+\/)?models\//, '');
  return `/models/${encodeURIComponent(model).replaceAll('%40', '@')}:${method}`;
}
