/**
 * The provider for OpenAI and OpenAI-compatible upstreams: the shared compatible implementation
 * (compatible-provider.ts) with a bearer key, OpenAI's paths under the configured base address,
 * and OpenAI's error bodies.
 * Headers and errors: https://platform.openai.com/docs/api-reference/authentication,
 * https://platform.openai.com/docs/guides/error-codes (docs/wire-protocols.md §6).
 */
import type { OpenAIProviderConfig } from '../../config/schema.js';
import type { Provider } from '../provider.js';
import { readMessageErrorBody } from '../shared/error-body.js';
import { createUpstreamHttpClient } from '../shared/upstream-http.js';
import { createCompatibleProvider } from './compatible-provider.js';
import { OPENAI_PATHS } from './endpoint-path.js';
import { readVendorErrorBody } from './vendor-error-body.js';
import { toVendorBody, VENDOR_PROFILES } from './vendors.js';

/**
 * Builds the provider. `env` supplies the secret named by `config.api_key_env` (sent as a bearer
 * token); a name that is configured but unset is a startup error (a missing secret would otherwise
 * surface as 401s on live traffic). The secret never appears in any message. A `vendor` selects
 * that vendor's request differences, error bodies and default address (vendors.ts,
 * docs/wire-protocols.md §20); vendors speak Chat only unless `api` says otherwise, and have no
 * moderations endpoint of OpenAI's.
 */
export function createOpenAIProvider(config: OpenAIProviderConfig, env: Readonly<Record<string, string | undefined>>): Provider {
  const profile = config.vendor === undefined ? undefined : VENDOR_PROFILES[config.vendor];
  // The schema requires base_url without a vendor.
  const baseUrl = config.base_url ?? profile?.baseUrl ?? '';
  const client = createUpstreamHttpClient('openai', { ...config, base_url: baseUrl }, env, {
    authHeaders: (secret) => ({ authorization: `Bearer ${secret}` }),
    readErrorBody: profile === undefined ? readMessageErrorBody : readVendorErrorBody,
  });
  return createCompatibleProvider({
    name: config.name,
    providerType: 'openai',
    api: config.api ?? (profile === undefined ? 'both' : 'chat'),
    client,
    pathOf: OPENAI_PATHS,
    moderations: profile === undefined,
    ...(profile === undefined ? {} : { chatBody: (body: Readonly<Record<string, unknown>>) => toVendorBody(profile, body) }),
  });
}
