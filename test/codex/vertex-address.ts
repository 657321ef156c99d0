/**
 * A scripted model played as a Vertex AI publisher model (docs/wire-protocols.md §19): the path is
 * the model's method under `/v1/projects/{project}/locations/{location}/publishers/{publisher}`,
 * and the only credential taken is a bearer token that a service account's token endpoint issued
 * and that still lives (test/support/google-token-endpoint.ts, which checks the account's JWT as
 * Google does). The key file the catalog names points its `token_uri` at that endpoint.
 */
import { startTokenServer, type ServiceAccount, type TokenEndpoint } from '../support/google-token-endpoint.js';
import { CLOUD_PLATFORM_SCOPE } from '../support/vertex-upstream.js';
import type { DoubleAddress } from './model-double-server.js';

export const VERTEX_PROJECT = 'tollgate-agents';
export const VERTEX_LOCATION = 'us-east5';

/** A service account of the project and its token endpoint, on loopback. */
export interface VertexAccount {
  account: ServiceAccount;
  tokens: TokenEndpoint;
  close(): Promise<void>;
}

export function startVertexAccount(): Promise<VertexAccount> {
  return startTokenServer(VERTEX_PROJECT, CLOUD_PLATFORM_SCOPE);
}

/**
 * `…/publishers/{publisher}/models/{model}:{method}` (the method with its query, e.g.
 * `streamGenerateContent?alt=sse`), taking only the live tokens `tokens` issued, as Vertex does.
 */
export function vertexAddress(tokens: TokenEndpoint, publisher: 'google' | 'anthropic', model: string, method: string): DoubleAddress {
  return {
    path: `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/${publisher}/models/${model}:${method}`,
    authorized: (headers) => tokens.accepts(headers.authorization) && headers['x-goog-api-key'] === undefined && headers['x-api-key'] === undefined,
  };
}

/** The catalog's provider for that account at the double's origin. */
export function vertexProvider(name: string, origin: string, account: ServiceAccount, publisher: 'google' | 'anthropic'): Record<string, unknown> {
  return { name, type: 'vertex', project: VERTEX_PROJECT, location: VERTEX_LOCATION, endpoint: origin, publisher, credentials_file: account.keyFile };
}
