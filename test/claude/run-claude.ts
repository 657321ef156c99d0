/**
 * Runs one headless Claude Code turn (`claude -p`) against the gateway, configured as a user
 * would point it at a gateway: ANTHROPIC_BASE_URL at the gateway's base address, a Tollgate key as
 * ANTHROPIC_API_KEY (sent as `x-api-key`) or ANTHROPIC_AUTH_TOKEN (sent as a bearer token), and
 * the catalog model for the main loop and for every side task (ANTHROPIC_DEFAULT_*_MODEL), since
 * Anthropic's own model names mean nothing to the gateway. HOME is a fresh temporary folder, so
 * the user's ~/.claude is never read; telemetry, error reporting and auto-update are off. Tools
 * run without a prompt (`--permission-mode acceptEdits`, Bash allowed).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnBounded, type SpawnOutcome } from '../support/spawn-bounded.js';

export interface ClaudeRunOptions {
  /** The native binary, from `ensureClaudeCode()`. */
  binary: string;
  /** The gateway's base address (no `/v1`: the client adds `/v1/messages`). */
  baseUrl: string;
  apiKey: string;
  /** How the key is sent: `x-api-key` (ANTHROPIC_API_KEY) or a bearer token (ANTHROPIC_AUTH_TOKEN). */
  keyAs: 'api-key' | 'bearer';
  model: string;
  prompt: string;
  timeoutMs: number;
  /** The workspace folder to run in (created by the caller, with any files the run needs). */
  workspace: string;
}

export interface ClaudeRunResult extends SpawnOutcome {
  /** `--output-format json`'s result object, when stdout held one. */
  result: Record<string, unknown> | undefined;
}

export function makeWorkspace(files: Record<string, string> = {}): string {
  const folder = mkdtempSync(join(tmpdir(), 'tollgate-claude-ws-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  return folder;
}

export function readWorkspaceFile(workspace: string, name: string): string | undefined {
  try {
    return readFileSync(join(workspace, name), 'utf8');
  } catch {
    return undefined;
  }
}

export async function runClaude(options: ClaudeRunOptions): Promise<ClaudeRunResult> {
  const home = mkdtempSync(join(tmpdir(), 'tollgate-claude-home-'));
  mkdirSync(join(home, '.claude'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    SHELL: '/bin/bash',
    ANTHROPIC_BASE_URL: options.baseUrl,
    [options.keyAs === 'api-key' ? 'ANTHROPIC_API_KEY' : 'ANTHROPIC_AUTH_TOKEN']: options.apiKey,
    ANTHROPIC_MODEL: options.model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: options.model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: options.model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: options.model,
    ANTHROPIC_SMALL_FAST_MODEL: options.model,
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    // Lists the gateway's models (GET /v1/models with x-api-key) for its model picker.
    CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY: '1',
  };
  const args = ['-p', options.prompt, '--output-format', 'json', '--permission-mode', 'acceptEdits', '--allowedTools', 'Bash,Read,Edit,Write'];
  try {
    const outcome = await spawnBounded(options.binary, args, { cwd: options.workspace, env, timeoutMs: options.timeoutMs });
    return { ...outcome, result: parseResult(outcome.stdout) };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function parseResult(stdout: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(stdout.trim());
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
