/**
 * The upstream secrets of an HTTP provider, read once at startup: one key from the environment
 * variable its config names (`api_key_env`), or a pool of named keys (`api_keys`), each from a
 * variable or a file.
 */
import { readFileSync } from 'node:fs';
import type { PooledKey } from './key-pool.js';

/** Where one key of a pool is read: an environment variable or a file, by name. */
export interface PooledKeySource {
  name: string;
  env?: string | undefined;
  file?: string | undefined;
}

/** The part of an HTTP provider's config that names its secret. */
export interface SecretConfig {
  name: string;
  /** The environment variable holding the API key; none (and no `api_keys`) means the upstream takes no key. */
  api_key_env?: string | undefined;
  /** A pool of keys instead of one (the schema allows one of the two). */
  api_keys?: readonly PooledKeySource[] | undefined;
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

/**
 * The keys of a pool, trimmed, or undefined when the config lists none. A variable unset or blank,
 * or a file that cannot be read or is empty, is a startup error naming the key, the variable or the
 * file, never a value.
 */
export function resolvePooledKeys(providerType: string, config: SecretConfig, env: Readonly<Record<string, string | undefined>>): PooledKey[] | undefined {
  if (config.api_keys === undefined) return undefined;
  return config.api_keys.map((source) => {
    const label = `${providerType} provider "${config.name}", key "${source.name}"`;
    if (source.env !== undefined) {
      const secret = env[source.env]?.trim() ?? '';
      if (secret === '') throw new Error(`${label}: environment variable ${source.env} is not set`);
      return { name: source.name, secret };
    }
    if (source.file === undefined) throw new Error(`${label}: names neither env nor file`);
    let secret: string;
    try {
      secret = readFileSync(source.file, 'utf8').trim();
    } catch (error) {
      throw new Error(`${label}: the file ${source.file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    if (secret === '') throw new Error(`${label}: the file ${source.file} is empty`);
    return { name: source.name, secret };
  });
}
