/**
 * The gateway under test: the BUILT `dist/cli/main.js`, configured with a catalog that points at
 * the mock upstream, a database (a SQLite file in a temporary folder, or a PostgreSQL database the
 * benchmark created, with Redis for limits), and a funded account with one key, created beforehand
 * with the gateway's own CLI on that database.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startNode } from './processes.mjs';

/**
 * The catalog: three providers that are all the mock, limits far out of reach; with `log: false`,
 * the request log turned off (to measure what it costs).
 * - `mock` (OpenAI, `api: both`): `bench` and `bench-slow` take the pass-through path on both
 *   surfaces; `bench-embed` serves `/v1/embeddings` alone, its body passed through
 *   (docs/wire-protocols.md §7);
 * - `mock-chat` (OpenAI, `api: chat`): `bench-via-chat` on /v1/responses is translated onto Chat
 *   Completions (docs/wire-protocols.md §3);
 * - `mock-anthropic` (Anthropic): `bench-via-anthropic` on /v1/responses is translated onto the
 *   Messages API (docs/wire-protocols.md §4).
 */
function catalogYaml(mockPort, { log = true, embeddings = true } = {}) {
  const model = (id, provider, upstream) => `  - id: ${id}
    prices: { input: 1, output: 2 }
    max_output_tokens: 1024
    targets: [{ provider: ${provider}, model: ${upstream} }]`;
  return `providers:
  - name: mock
    type: openai
    base_url: http://127.0.0.1:${mockPort}/v1
    api: both
  - name: mock-chat
    type: openai
    base_url: http://127.0.0.1:${mockPort}/v1
    api: chat
  - name: mock-anthropic
    type: anthropic
    base_url: http://127.0.0.1:${mockPort}/v1
models:
${model('bench', 'mock', 'mock-fast')}
${model('bench-slow', 'mock', 'mock-slow')}
${embeddings ? `  - id: bench-embed
    endpoints: [embeddings]
    prices: { input: 0.02, output: 0 }
    targets: [{ provider: mock, model: mock-embed }]
` : ''}${model('bench-via-chat', 'mock-chat', 'mock-fast')}
${model('bench-via-anthropic', 'mock-anthropic', 'mock-fast')}
rate_limits: { requests: 100000000, window_seconds: 60, tokens_per_minute: 0 }
${log ? '' : 'log: { enabled: false }\n'}`;
}

/**
 * Writes the catalog, creates the schema, the account and the key; returns the env and key. The
 * database is `databaseUrl` (default: a SQLite file in `folder`); with `redisUrl`, limits live in
 * Redis. Every TOLLGATE_ and OTEL_ variable of the shell is dropped, so that the gateway runs with
 * exactly this setup (tracing is off unless a target turns it on).
 */
export function prepareTollgate({ gatewayPath, folder, mockPort, log = true, embeddings = true, databaseUrl, redisUrl }) {
  const catalog = join(folder, 'catalog.yaml');
  writeFileSync(catalog, catalogYaml(mockPort, { log, embeddings }));
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('TOLLGATE_') || name.startsWith('OTEL_')) delete env[name];
  delete env.NODE_OPTIONS;
  Object.assign(env, {
    HOST: '127.0.0.1',
    TOLLGATE_DATABASE_URL: databaseUrl ?? `sqlite:${join(folder, 'bench.db')}`,
    TOLLGATE_CONFIG: catalog,
    TOLLGATE_LOG_LEVEL: 'warn',
  });
  if (redisUrl !== undefined) env.TOLLGATE_REDIS_URL = redisUrl;
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
