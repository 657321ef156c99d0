/**
 * The gateway under test: the BUILT `dist/cli/main.js`, configured with a catalog that points at
 * the mock upstream, a SQLite database in a temporary folder, and a funded account with one key,
 * created beforehand with the gateway's own CLI.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startNode } from './processes.mjs';

/**
 * The catalog: one pass-through provider (the mock), a fast and a slow model, limits far out of
 * reach; with `log: false`, the request log turned off (to measure what it costs).
 */
function catalogYaml(mockPort, { log = true } = {}) {
  const model = (id, upstream) => `  - id: ${id}
    prices: { input: 1, output: 2 }
    max_output_tokens: 1024
    targets: [{ provider: mock, model: ${upstream} }]`;
  return `providers:
  - name: mock
    type: openai
    base_url: http://127.0.0.1:${mockPort}/v1
    api: both
models:
${model('bench', 'mock-fast')}
${model('bench-slow', 'mock-slow')}
rate_limits: { requests: 100000000, window_seconds: 60, tokens_per_minute: 0 }
${log ? '' : 'log: { enabled: false }\n'}`;
}

/** Writes the catalog, creates the database, the account and the key; returns the env and key. */
export function prepareTollgate({ gatewayPath, folder, mockPort, log = true }) {
  const catalog = join(folder, 'catalog.yaml');
  writeFileSync(catalog, catalogYaml(mockPort, { log }));
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    TOLLGATE_DATABASE_URL: `sqlite:${join(folder, 'bench.db')}`,
    TOLLGATE_CONFIG: catalog,
    TOLLGATE_LOG_LEVEL: 'warn',
  };
  delete env.NODE_OPTIONS;
  // Tracing is off unless a target turns it on (tollgate-1-traced), whatever the shell has set.
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
  const cli = (...args) => JSON.parse(execFileSync(process.execPath, [gatewayPath, ...args, '--json'], { env, encoding: 'utf8', timeout: 30_000 }));
  cli('accounts', 'create', '--name', 'bench', '--balance', '1000000');
  const { key } = cli('keys', 'create', '--account', 'bench', '--name', 'bench');
  if (typeof key !== 'string') throw new Error('keys create --json gave no key');
  return { env, key };
}

/**
 * Starts `serve --workers <workers>` on `port` and waits until /healthz answers. Resolves with
 * `{ handle }`, or `{ unavailable: reason }` when the process exits or never becomes healthy.
 */
export async function startTollgate({ gatewayPath, env, port, workers, nodeArgs = [], timeoutMs = 20_000 }) {
  const handle = startNode([...nodeArgs, gatewayPath, 'serve', '--workers', String(workers)], { env: { ...env, PORT: String(port) } });
  let exited;
  handle.exited.then((result) => (exited = result));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited !== undefined) return { unavailable: `exited (${exited.code ?? exited.signal}): ${lastLines(handle.output())}` };
    try {
      const response = await request(`http://127.0.0.1:${port}/healthz`, { headersTimeout: 1_000, bodyTimeout: 1_000, reset: true });
      await response.body.dump();
      if (response.statusCode === 200) return { handle };
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { handle, unavailable: `not healthy within ${timeoutMs} ms: ${lastLines(handle.output())}` };
}

function lastLines(text) {
  return text.trim().split('\n').slice(-3).join(' | ').slice(0, 400);
}
