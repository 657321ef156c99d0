/**
 * Microsoft Entra ID tokens for an `azure` provider (docs/wire-protocols.md §17.2): OAuth2 client
 * credentials, a POST of `grant_type=client_credentials&client_id=…&client_secret=…&scope=…` to
 * `{authority}/{tenant_id}/oauth2/v2.0/token`, whose `access_token` goes upstream as a bearer.
 * Kept, renewed and failed as every OAuth2 token is (shared/oauth-token-source.ts): a refusal is
 * a `credentials` failure naming the endpoint's `error` and `AADSTS…` description, and no message
 * holds the client secret, a token, nor the authority's address.
 */
import type { EntraAuthConfig, TimeoutsConfig } from '../../config/schema.js';
import { OAuthTokenSource, renewalMargin } from '../shared/oauth-token-source.js';

export { renewalMargin };

export interface EntraTokenOptions {
  /** The provider's name in the catalog, for messages. */
  providerName: string;
  config: EntraAuthConfig;
  /** The client secret, read from the variable `config.client_secret_env` names. */
  clientSecret: string;
  timeouts: TimeoutsConfig;
  /** The clock (ms since epoch); the system clock by default. */
  now?: () => number;
}

export class EntraTokenSource extends OAuthTokenSource {
  constructor(options: EntraTokenOptions) {
    const { config, clientSecret } = options;
    super({
      label: `azure provider "${options.providerName}"`,
      endpointName: 'the Entra ID token endpoint',
      grantName: 'the client credentials',
      tokenUrl: `${config.authority.replace(/\/+$/, '')}/${encodeURIComponent(config.tenant_id)}/oauth2/v2.0/token`,
      form: () => new URLSearchParams({ grant_type: 'client_credentials', client_id: config.client_id, client_secret: clientSecret, scope: config.scope }),
      secret: clientSecret,
      timeoutMs: config.timeout_ms,
      timeouts: options.timeouts,
      ...(options.now === undefined ? {} : { now: options.now }),
    });
  }
}
