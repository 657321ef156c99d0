/**
 * What `serve` loads (docs/architecture.md, "What a process loads"): on SQLite, without Redis,
 * with a catalog of OpenAI-compatible providers, none of the libraries that only some
 * configurations use is imported at start (PostgreSQL's driver, Redis's client, AWS's and Google's
 * SDKs, the audio reader), nor the tokenizer's ES-module build (protocol/tokens.ts requires its
 * CommonJS one); with a `bedrock` and a `vertex` provider in the catalog, AWS's and Google's
 * libraries are imported at start, before the first call needs them. The real built gateway, with a
 * module loader hook (node:module `register`) that writes down every package module it loads.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, writeCatalog } from '../support/gateway-process.js';
import { waitFor } from '../support/wait-for.js';

/** Package folders whose modules a plain SQLite gateway must not load. */
const NOT_AT_START = ['pg', 'ioredis', '@aws-sdk/credential-provider-node', '@smithy/signature-v4', 'google-auth-library', 'music-metadata', 'gpt-tokenizer/esm'];

let folder: string;
let runs = 0;

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'tollgate-loaded-'));
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** `--import` of a hook that appends the URL of each module loaded from node_modules to `list`. */
function recordingOption(list: string): string {
  const hook = [
    "import { appendFileSync } from 'node:fs';",
    'export async function load(url, context, next) {',
    `  if (url.includes('/node_modules/')) appendFileSync(${JSON.stringify(list)}, url + '\\n');`,
    '  return next(url, context);',
    '}',
  ].join('\n');
  const registration = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  return `--import=data:text/javascript,${encodeURIComponent(registration)}`;
}

function catalogWith(providers: unknown[]): string {
  const model = (id: string, provider: string) => ({ id, prices: { input: 1, output: 2 }, max_output_tokens: 256, targets: [{ provider, model: 'upstream-model' }] });
  return writeCatalog({ providers, models: providers.map((provider) => model(`model-of-${(provider as { name: string }).name}`, (provider as { name: string }).name)) });
}

/** Serves once with `catalog`; resolves with the packages' module URLs loaded once `until` holds of them (or right after start). */
async function loadedBy(catalog: string, until: (loaded: string) => boolean = () => true): Promise<string> {
  runs += 1;
  const list = join(folder, `loaded-${runs}.txt`);
  writeFileSync(list, '');
  const gateway = await startGatewayProcess({
    TOLLGATE_DATABASE_URL: `sqlite:${join(folder, `run-${runs}.db`)}`,
    TOLLGATE_CONFIG: catalog,
    TOLLGATE_REDIS_URL: '',
    GOOGLE_APPLICATION_CREDENTIALS: '',
    NODE_OPTIONS: recordingOption(list),
  });
  try {
    expect((await fetch(`${gateway.baseUrl}/healthz`)).status).toBe(200);
    await waitFor(() => Promise.resolve(until(readFileSync(list, 'utf8'))));
    return readFileSync(list, 'utf8');
  } finally {
    expect(await gateway.stop()).toBe(0);
  }
}

const OPENAI = { name: 'openai-like', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api: 'both' };

describe('serve loads', () => {
  it('none of the libraries of other configurations on SQLite with OpenAI-compatible providers', async () => {
    const loaded = await loadedBy(catalogWith([OPENAI]));
    // The hook sees the packages that are loaded.
    expect(loaded).toContain('/node_modules/fastify/');
    expect(loaded).toContain('/node_modules/better-sqlite3/');
    for (const name of NOT_AT_START) expect(loaded, name).not.toContain(`/node_modules/${name}/`);
  });

  it('AWS’s and Google’s libraries at start when the catalog has a bedrock and a vertex provider', async () => {
    const bedrock = { name: 'bedrock', type: 'bedrock', region: 'us-east-1', endpoint: 'http://127.0.0.1:9' };
    const vertex = { name: 'vertex', type: 'vertex', project: 'tollgate-test', location: 'us-central1', endpoint: 'http://127.0.0.1:9', publisher: 'google' };
    const wanted = ['@aws-sdk/credential-provider-node', '@smithy/signature-v4', 'google-auth-library'];
    const loaded = await loadedBy(catalogWith([OPENAI, bedrock, vertex]), (text) => wanted.every((name) => text.includes(`/node_modules/${name}/`)));
    for (const name of wanted) expect(loaded, name).toContain(`/node_modules/${name}/`);
    for (const name of ['pg', 'ioredis', 'music-metadata', 'gpt-tokenizer/esm']) expect(loaded, name).not.toContain(`/node_modules/${name}/`);
  });
});
