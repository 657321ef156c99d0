/**
 * The upstream secret of an HTTP provider, read once at startup from the environment variable its
 * config names.
 */

/** The part of an HTTP provider's config that names its secret. */
export interface SecretConfig {
  name: string;
  /** The environment variable holding the API key; none means the upstream takes no key. */
  api_key_env?: string | undefined;
}

/**
 * The trimmed secret, or undefined when the config names no variable. A variable that is named but
 * unset (or blank) is a startup error: a missing secret would otherwise surface as refusals on live
 * traffic. The message names the variable, never a value.
 */
export function resolveSecret(providerType: string, config: SecretConfig, env: Readonly<Record<string, string | undefined>>, what = 'its API key'): string | undefined {
  if (config.api_key_env === undefined) return undefined;
  const secret = env[config.api_key_env];
  if (secret === undefined || secret.trim() === '') {
    throw new Error(`${providerType} provider "${config.name}": environment variable ${config.api_key_env} (${what}) is not set`);
  }
  return secret.trim();
}
