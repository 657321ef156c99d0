/**
 * Installs the Claude Code CLI (npm `@anthropic-ai/claude-code`) for the tests that drive it,
 * outside the package's dependencies: into `<repo>/.tollgate-cache/claude-code/` (git-ignored) on
 * first use, reused afterwards. The npm package is a small launcher; the native binary comes as an
 * optional dependency for the platform (`@anthropic-ai/claude-code-linux-x64`, …), from the same
 * registry. The binary is run directly, so the launcher's Node version requirement does not apply.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Pinned: Claude Code changes what it sends from release to release, and the tests assert on it. */
export const CLAUDE_CODE_VERSION = '2.1.332';

const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLAUDE_CODE_CACHE_FOLDER = join(repositoryRoot, '.tollgate-cache', 'claude-code');
const scope = join(CLAUDE_CODE_CACHE_FOLDER, 'node_modules', '@anthropic-ai');

/** The platform package's binary, and the launcher package's copy of it (made by its postinstall). */
function binaryCandidates(): string[] {
  const libc = process.platform === 'linux' && !existsSync('/lib64/ld-linux-x86-64.so.2') && !existsSync('/lib/ld-linux-aarch64.so.1') ? '-musl' : '';
  return [join(scope, `claude-code-${process.platform}-${process.arch}${libc}`, 'claude'), join(scope, 'claude-code', 'bin', 'claude.exe')];
}

/** A first install downloads about 100 MB compressed; a registry that does not answer must not hang the suite. */
const INSTALL_TIMEOUT_MS = 240_000;

/**
 * Returns the path of the native `claude` binary, installing the pinned version first when it is
 * missing or another version is there. Rejects with the reason when the install fails.
 */
export async function ensureClaudeCode(): Promise<string> {
  const found = await runnableBinary();
  if (found !== undefined) return found;
  mkdirSync(CLAUDE_CODE_CACHE_FOLDER, { recursive: true });
  try {
    await run(
      'npm',
      ['install', '--prefix', CLAUDE_CODE_CACHE_FOLDER, '--no-audit', '--no-fund', '--no-save', '--fetch-retries=1', '--engine-strict=false', `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`],
      { timeout: INSTALL_TIMEOUT_MS, env: withoutLocationSettings(process.env), maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    const reasons = typeof stderr === 'string' ? stderr.split('\n').filter((line) => /^npm error \S/.test(line)).slice(0, 4).join(' | ') : '';
    throw new Error(`Could not install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} into ${CLAUDE_CODE_CACHE_FOLDER}: ${String(error).split('\n')[0]} ${reasons}`, { cause: error });
  }
  const installed = await runnableBinary();
  if (installed === undefined) {
    throw new Error(`@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} was installed into ${CLAUDE_CODE_CACHE_FOLDER} but does not run (no native binary for ${process.platform}-${process.arch}?)`);
  }
  return installed;
}

/** The first candidate binary that answers `--version` with the pinned version. */
async function runnableBinary(): Promise<string | undefined> {
  for (const binary of binaryCandidates()) {
    if (!existsSync(binary)) continue;
    try {
      const { stdout } = await run(binary, ['--version'], { timeout: 30_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DISABLE_AUTOUPDATER: '1' } });
      if (stdout.includes(CLAUDE_CODE_VERSION)) return binary;
    } catch {
      // Try the next one.
    }
  }
  return undefined;
}

const LOCATION_SETTINGS = new Set(['npm_config_prefix', 'npm_config_local_prefix', 'npm_config_global', 'npm_config_location', 'npm_config_save']);

/** An enclosing `npm test` exports its own location settings, which must not redirect the install. */
function withoutLocationSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !LOCATION_SETTINGS.has(name.toLowerCase())));
}
