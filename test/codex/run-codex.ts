/**
 * Runs one non-interactive Codex turn (`codex exec --json`) against the gateway the way a new user
 * would, in one of the README's two configurations: the simplest, one `openai_base_url` line (the
 * built-in OpenAI provider, which opens the Responses WebSocket first; the key in `CODEX_API_KEY`),
 * or a provider block (plain HTTP; the key in the variable its `env_key` names). Codex sends its
 * default tools. Everything Codex
 * keeps lives in a fresh temporary CODEX_HOME, and HOME points there too, so the user's own
 * ~/.codex is never read. Command-line flags, not the config file, set what belongs to the test
 * machine: no sandbox (the folder is throwaway, and a sandbox may not start in a container), the
 * reasoning effort of the turn, and no telemetry or update check.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnBounded } from '../support/spawn-bounded.js';

export interface CodexExecOptions {
  /** Codex's JS launcher, from `ensureCodex()`. */
  launcher: string;
  /** The gateway's OpenAI base URL, ending in `/v1`. */
  baseUrl: string;
  /** A Tollgate API key. */
  apiKey: string;
  /** The catalog model id. */
  model: string;
  prompt: string;
  /** `model_reasoning_effort` for this turn; Codex's default when absent. */
  effort?: string;
  timeoutMs: number;
  /** Workspace files to read back after the run (relative paths). */
  readBack?: string[];
  /** `base-url`: the one `openai_base_url` line; `provider`: a provider block (the default). */
  config?: CodexConfigForm;
  /** More `config.toml` lines (e.g. a small context window, to make Codex compact). */
  extraConfig?: string[];
}

export type CodexConfigForm = 'base-url' | 'provider';

/** One `codex exec --json` event line. */
export type CodexEvent = Record<string, unknown> & { type: string };

export interface CodexExecResult {
  /** null when the run was killed. */
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** The JSON events Codex printed. */
  events: CodexEvent[];
  /** The items of `item.completed` events, by type: `agent_message`, `reasoning`, `error` (warnings). */
  items: Array<Record<string, unknown> & { type: string }>;
  /** What `--output-last-message` wrote: the agent's final message ('' when none). */
  lastMessage: string;
  /** The config.toml used, for failure messages. */
  config: string;
  /** The `readBack` files' contents (absent when missing). */
  files: Record<string, string>;
}

/** The environment variable Codex reads the Tollgate key from (`env_key`) with a provider block. */
const KEY_VARIABLE = 'TOLLGATE_API_KEY';
/** The variable `codex exec` reads an API key from for its built-in OpenAI provider. */
const CODEX_KEY_VARIABLE = 'CODEX_API_KEY';

/** The README's Codex configurations, for this gateway and model. */
export function codexConfig(options: Pick<CodexExecOptions, 'baseUrl' | 'model' | 'config' | 'extraConfig'>): string {
  const toml = (value: string) => JSON.stringify(value);
  const extra = options.extraConfig ?? [];
  if (options.config === 'base-url') return [`model = ${toml(options.model)}`, `openai_base_url = ${toml(options.baseUrl)}`, ...extra, ''].join('\n');
  return [
    ...extra,
    `model = ${toml(options.model)}`,
    'model_provider = "tollgate"',
    '',
    '[model_providers.tollgate]',
    'name = "Tollgate"',
    `base_url = ${toml(options.baseUrl)}`,
    `env_key = ${toml(KEY_VARIABLE)}`,
    'wire_api = "responses"',
    '',
  ].join('\n');
}

export async function runCodexExec(options: CodexExecOptions): Promise<CodexExecResult> {
  const folder = mkdtempSync(join(tmpdir(), 'tollgate-codex-'));
  const codexHome = join(folder, 'codex-home');
  const workspace = join(folder, 'workspace');
  const lastMessageFile = join(folder, 'last-message.txt');
  mkdirSync(codexHome);
  mkdirSync(workspace);
  const config = codexConfig(options);
  writeFileSync(join(codexHome, 'config.toml'), config);
  const overrides = [
    ...(options.effort === undefined ? [] : ['-c', `model_reasoning_effort=${JSON.stringify(options.effort)}`]),
    '-c',
    'analytics.enabled=false',
    '-c',
    'check_for_update_on_startup=false',
  ];
  const args = [
    options.launcher,
    'exec',
    '--json',
    '--strict-config',
    '--ephemeral',
    '--skip-git-repo-check',
    '--sandbox',
    'danger-full-access',
    ...overrides,
    '--output-last-message',
    lastMessageFile,
    options.prompt,
  ];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: folder,
    CODEX_HOME: codexHome,
    [options.config === 'base-url' ? CODEX_KEY_VARIABLE : KEY_VARIABLE]: options.apiKey,
    LANG: 'C.UTF-8',
  };
  try {
    const outcome = await spawnBounded(process.execPath, args, { cwd: workspace, env, timeoutMs: options.timeoutMs });
    let lastMessage = '';
    try {
      lastMessage = readFileSync(lastMessageFile, 'utf8');
    } catch {
      // No final message: the run failed before the agent answered.
    }
    const files: Record<string, string> = {};
    for (const name of options.readBack ?? []) {
      try {
        files[name] = readFileSync(join(workspace, name), 'utf8');
      } catch {
        // Missing: the assertion on `files` says so.
      }
    }
    const events = parseEvents(outcome.stdout);
    const items = events.flatMap((event) => (event.type === 'item.completed' && isItem(event.item) ? [event.item] : []));
    return { ...outcome, events, items, lastMessage, config, files };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

function parseEvents(stdout: string): CodexEvent[] {
  const events: CodexEvent[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const event: unknown = JSON.parse(line);
      if (isItem(event)) events.push(event);
    } catch {
      // Not an event line.
    }
  }
  return events;
}

function isItem(value: unknown): value is Record<string, unknown> & { type: string } {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

