/**
 * The key compaction summaries are sealed with (lib/seal.ts; README, "Compaction"):
 * `TOLLGATE_SEAL_KEY` (32 bytes, base64) when set; otherwise one drawn at startup, said once in a
 * warning, since what it seals opens only in this process (the workers of `serve --workers N` get
 * the primary's, so they read each other's), not after a restart nor on another instance.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { ENV, type Env } from '../config/env.js';
import { Sealer } from '../lib/seal.js';

const RANDOM_KEY_WARNING = `${ENV.sealKey} is not set: compaction items are sealed with a key drawn for this run, so they will not open after a restart or on another instance (set ${ENV.sealKey} to 32 random bytes in base64)`;

/** The sealer of a gateway process; a malformed key stops the startup. */
export function sealerFromEnv(env: Env, logger: Pick<Logger, 'warn'>): Sealer {
  const key = env[ENV.sealKey];
  if (key === undefined || key === '') {
    logger.warn(RANDOM_KEY_WARNING);
    return Sealer.withRandomKey();
  }
  try {
    return Sealer.fromBase64(key);
  } catch (error) {
    throw new Error(`${ENV.sealKey}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/**
 * What the primary of `serve --workers N` adds to its workers' environment: a key drawn once (and
 * the warning said once) when none is set, so that every worker opens what another sealed.
 */
export function workersSealKey(env: Env, logger: Pick<Logger, 'warn'>): Record<string, string> {
  const key = env[ENV.sealKey];
  if (key !== undefined && key !== '') return {};
  logger.warn(RANDOM_KEY_WARNING);
  return { [ENV.sealKey]: randomBytes(32).toString('base64') };
}
