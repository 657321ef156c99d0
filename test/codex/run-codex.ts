/**
 * Runs one non-interactive Codex turn (`codex exec`) against the gateway, the way a user would
 * configure it: a custom model provider with the gateway's `/v1` as `base_url`, the Tollgate key
 * in an environment variable, and the Responses wire API. Everything Codex keeps (config, logs,
 * sessions) lives in a fresh temporary CODEX_HOME, and HOME points there too, so the user's own
 * ~/.codex is never read. The settings turn off what would reach beyond loopback (web search,
 * plugin and app sync, update checks, analytics), let the shell command run without an approval
 * prompt, and make a refused request fail at once instead of being retried.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
  timeoutMs: number;
  /** Workspace files to read back after the run (relative paths). */
  readBack?: string[];
}

export interface CodexExecResult {
  /** null when the run was killed. */
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** What `--output-last-message` wrote: the agent's final message ('' when none). */
  lastMessage: string;
  /** The config.toml used, for failure messages. */
  config: string;
  /** The `readBack` files' contents (absent when missing). */
  files: Record<string, string>;
}

/** The environment variable Codex reads the Tollgate key from (`env_key`). */
const KEY_VARIABLE = 'TOLLGATE_API_KEY';

/**
 * Codex's own description of the model (its `model_catalog_json` format). Without one Codex uses
 * fallback metadata, which leaves out `apply_patch`; with this one it declares `apply_patch` as a
 * free-form (`custom`) tool, as it does for OpenAI's current models.
 */
export function codexModelCatalog(model: string): string {
  return JSON.stringify({
    models: [
      {
        slug: model,
        display_name: model,
        base_instructions: 'You are Codex, a coding agent. Use the tools to run commands and edit files.',
        apply_patch_tool_type: 'freeform',
        shell_type: 'shell_command',
        supported_reasoning_levels: [],
        visibility: 'list',
        supported_in_api: true,
        priority: 1,
        support_verbosity: false,
        truncation_policy: { mode: 'tokens', limit: 10_000 },
        experimental_supported_tools: [],
      },
    ],
  });
}

export function codexConfig(options: Pick<CodexExecOptions, 'baseUrl' | 'model'> & { modelCatalogFile: string }): string {
  const toml = (value: string) => JSON.stringify(value);
  return [
    `model = ${toml(options.model)}`,
    `model_catalog_json = ${toml(options.modelCatalogFile)}`,
    'model_provider = "tollgate"',
    // Run the model's shell commands without asking; the test's working folder is throwaway.
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    // A hosted tool only OpenAI can run: translated routes refuse it (docs/wire-formats.md §2.3).
    'web_search = "disabled"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    // Plugin and app sync reach api.github.com and chatgpt.com at start.
    '[features]',
    'plugins = false',
    'apps = false',
    '',
    // Sub-agent tools come as a `namespace` tool, which translated routes refuse as well.
    '[agents]',
    'enabled = false',
    '',
    '[model_providers.tollgate]',
    'name = "Tollgate"',
    `base_url = ${toml(options.baseUrl)}`,
    `env_key = ${toml(KEY_VARIABLE)}`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    'stream_idle_timeout_ms = 30000',
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
  const modelCatalogFile = join(codexHome, 'models.json');
  writeFileSync(modelCatalogFile, codexModelCatalog(options.model));
  const config = codexConfig({ ...options, modelCatalogFile });
  writeFileSync(join(codexHome, 'config.toml'), config);
  const args = [
    options.launcher,
    'exec',
    '--strict-config',
    '--ephemeral',
    '--skip-git-repo-check',
    '--color',
    'never',
    '--output-last-message',
    lastMessageFile,
    options.prompt,
  ];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: folder,
    CODEX_HOME: codexHome,
    [KEY_VARIABLE]: options.apiKey,
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
    return { ...outcome, lastMessage, config, files };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

interface SpawnOutcome {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Spawns in its own process group, so that on timeout the launcher and the native binary it
 * starts are killed together.
 */
function spawnBounded(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<SpawnOutcome> {
  return new Promise((resolve, reject) => {
    // stdin is closed: `codex exec` appends piped stdin to the prompt and would wait for it.
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, timedOut, stdout, stderr });
    });
  });
}
