/**
 * Which source a `vertex` provider's bearer tokens come from (docs/wire-protocols.md §19.2): the
 * credentials file the catalog names, else the one `GOOGLE_APPLICATION_CREDENTIALS` names, else
 * the rest of Application Default Credentials. A service account's key is exchanged here, at its
 * own `token_uri` (service-account-token.ts); anything else goes to Google's auth library
 * (adc-token.ts). A named file that cannot be read is a startup error.
 */
import type { VertexProviderConfig } from '../../config/schema.js';
import type { CallCredentials } from '../shared/call-credentials.js';
import { AdcTokenSource } from './adc-token.js';
import { readCredentialsFile } from './credentials-file.js';
import { ServiceAccountTokenSource } from './service-account-token.js';

export type VertexCredentials = CallCredentials & { close(): Promise<void> };

export function vertexCredentials(config: VertexProviderConfig, env: Readonly<Record<string, string | undefined>>, now: (() => number) | undefined): VertexCredentials {
  const label = `vertex provider "${config.name}"`;
  const fromEnv = env.GOOGLE_APPLICATION_CREDENTIALS?.trim();
  const file = config.credentials_file ?? (fromEnv === '' ? undefined : fromEnv);
  const common = { label, scopes: config.scopes, timeoutMs: config.token_timeout_ms };
  if (file === undefined) return new AdcTokenSource(common);
  const credentials = readCredentialsFile(file, label);
  if (credentials.kind === 'other') return new AdcTokenSource({ ...common, credentials: credentials.json });
  return new ServiceAccountTokenSource({ ...common, key: credentials, timeouts: config.timeouts, ...(now === undefined ? {} : { now }) });
}
