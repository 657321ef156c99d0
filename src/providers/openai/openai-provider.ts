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

/**
 * Builds the provider. `env` supplies the secret named by `config.api_key_env` (sent as a bearer
 * token); a name that is configured but unset is a startup error (a missing secret would otherwise
 * surface as 401s on live traffic). The secret never appears in any message.
 */
export function createOpenAIProvider(config: OpenAIProviderConfig, env: Readonly<Record<string, string | undefined>>): Provider {
  const client = createUpstreamHttpClient('openai', config, env, {
    authHeaders: (secret) => ({ authorization: `Bearer ${secret}` }),
    readErrorBody: readMessageErrorBody,
  });
  return createCompatibleProvider({ name: config.name, providerType: 'openai', api: config.api, client, pathOf: OPENAI_PATHS, moderations: true });
}
