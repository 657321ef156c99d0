/**
 * Installs the Codex CLI (npm `@openai/codex`) for the tests that drive it, outside the package's
 * dependencies so a user's `npm install` stays small: it goes into `<repo>/.tollgate-cache/codex/`
 * (git-ignored) on first use and is reused afterwards. The npm package ships a small JS launcher;
 * the native binary comes as an optional dependency for the platform (`@openai/codex-linux-x64`, …),
 * which npm installs from the same registry.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Pinned: Codex changes what it sends from release to release, and the tests assert on it. */
export const CODEX_VERSION = '0.171.0';

const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where the CLI is installed. */
export const CODEX_CACHE_FOLDER = join(repositoryRoot, '.tollgate-cache', 'codex');
const packageFolder = join(CODEX_CACHE_FOLDER, 'node_modules', '@openai', 'codex');
const launcher = join(packageFolder, 'bin', 'codex.js');

/** A first install downloads about 100 MB; a registry that does not answer must not hang the suite. */
const INSTALL_TIMEOUT_MS = 240_000;

/**
 * Returns the path of Codex's JS launcher (run it with `process.execPath`), installing the pinned
 * version first when it is missing or another version is there. Rejects when the install fails,
 * e.g. because the registry cannot be reached; the error says why.
 */
export async function ensureCodex(): Promise<string> {
  if (await installedAndRunnable()) return launcher;
  mkdirSync(CODEX_CACHE_FOLDER, { recursive: true });
  try {
    await run(
      'npm',
      ['install', '--prefix', CODEX_CACHE_FOLDER, '--no-audit', '--no-fund', '--no-save', '--fetch-retries=1', `@openai/codex@${CODEX_VERSION}`],
      // An enclosing `npm test` exports its own location settings, which must not redirect this
      // install; registry, cache and proxy settings are kept.
      { timeout: INSTALL_TIMEOUT_MS, env: withoutLocationSettings(process.env), maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (error) {
    throw new Error(`Could not install @openai/codex@${CODEX_VERSION} into ${CODEX_CACHE_FOLDER}: ${installFailure(error)}`, { cause: error });
  }
  if (!(await installedAndRunnable())) {
    throw new Error(`@openai/codex@${CODEX_VERSION} was installed into ${CODEX_CACHE_FOLDER} but does not run (no native binary for ${process.platform}-${process.arch}?)`);
  }
  return launcher;
}

/** The pinned version is present and its native binary answers `--version`. */
async function installedAndRunnable(): Promise<boolean> {
  if (!existsSync(launcher)) return false;
  try {
    const manifest: unknown = JSON.parse(readFileSync(join(packageFolder, 'package.json'), 'utf8'));
    if (typeof manifest !== 'object' || manifest === null || (manifest as { version?: unknown }).version !== CODEX_VERSION) return false;
    const { stdout } = await run(process.execPath, [launcher, '--version'], { timeout: 30_000 });
    return stdout.includes(CODEX_VERSION);
  } catch {
    return false;
  }
}

const LOCATION_SETTINGS = new Set(['npm_config_prefix', 'npm_config_local_prefix', 'npm_config_global', 'npm_config_location', 'npm_config_save']);

function withoutLocationSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !LOCATION_SETTINGS.has(name.toLowerCase())));
}

function installFailure(error: unknown): string {
  if (error instanceof Error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    // npm's first error lines name the cause (code, failed URL); the rest is a stack trace.
    const reasons = typeof stderr === 'string' ? stderr.split('\n').filter((line) => /^npm error \S/.test(line)).slice(0, 4) : [];
    return reasons.length === 0 ? error.message : `${error.message.split('\n')[0]} — ${reasons.join(' | ')}`;
  }
  return String(error);
}
