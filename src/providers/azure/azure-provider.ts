/**
 * The provider for Azure OpenAI (docs/wire-protocols.md §17): the OpenAI-compatible implementation
 * (openai/compatible-provider.ts) at Azure's addresses (azure-paths.ts), authenticated by the
 * resource's key in `api-key` or by a Microsoft Entra ID token (entra-token.ts), with Azure's error
 * bodies (azure-error-body.ts). Azure has no moderations endpoint (docs/wire-protocols.md §17.1).
 */
import type { AzureProviderConfig } from '../../config/schema.js';
import { createCompatibleProvider } from '../openai/compatible-provider.js';
import type { Provider } from '../provider.js';
import { resolveSecret } from '../shared/provider-secret.js';
import { createUpstreamHttpClient } from '../shared/upstream-http.js';
import { readAzureErrorBody } from './azure-error-body.js';
import { azurePaths } from './azure-paths.js';
import { EntraTokenSource } from './entra-token.js';

export interface AzureProviderOptions {
  /** The clock the Entra ID token's expiry is read on (ms since epoch); the system clock by default. */
  now?: () => number;
}

/**
 * Builds the provider. `env` supplies the key named by `api_key_env` (or each key of `api_keys`), or
 * the client secret named by `entra.client_secret_env`; a name that is configured but unset is a startup error. No secret
 * appears in any message.
 */
export function createAzureProvider(config: AzureProviderConfig, env: Readonly<Record<string, string | undefined>>, options: AzureProviderOptions = {}): Provider {
  const entra = config.entra;
  const tokens =
    entra === undefined
      ? undefined
      : new EntraTokenSource({
          providerName: config.name,
          config: entra,
          clientSecret: resolveSecret('azure', { name: config.name, api_key_env: entra.client_secret_env }, env, 'its Entra ID client secret') ?? '',
          timeouts: config.timeouts,
          ...(options.now === undefined ? {} : { now: options.now }),
        });
  const client = createUpstreamHttpClient('azure', { name: config.name, base_url: config.endpoint, api_key_env: config.api_key_env, api_keys: config.api_keys, timeouts: config.timeouts }, env, {
    authHeaders: (secret) => ({ 'api-key': secret }),
    readErrorBody: readAzureErrorBody,
    ...(tokens === undefined ? {} : { credentials: tokens }),
  });
  const provider = createCompatibleProvider({ name: config.name, providerType: 'azure', api: config.api, client, pathOf: azurePaths(config), moderations: false });
  return {
    ...provider,
    close: async () => {
      await Promise.all([provider.close?.(), tokens?.close()]);
    },
  };
}
