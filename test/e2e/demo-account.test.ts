/**
 * The funded demo account is for a newcomer's first `npm start`, not for an operator's service:
 * `serve` creates it (and prints its key) only with the built-in demo catalog, or when asked with
 * `--demo` / TOLLGATE_DEMO=1. Real `serve` processes on a fresh SQLite file each.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { testCatalog } from '../support/catalog.js';
import { signIn } from '../support/console-session.js';
import { startGatewayProcess, writeCatalog } from '../support/gateway-process.js';

let folder: string;
let catalogPath: string;
let runs = 0;

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'tollgate-demo-'));
  catalogPath = writeCatalog(testCatalog());
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

interface Served {
  output: string;
  accounts: Array<{ name: string; balanceNanos: bigint }>;
  /** What signing in to the console answered for each secret the banner printed. */
  signIns: Array<{ secret: string; status: number; role: unknown }>;
}

/** Serves once on a fresh database; returns what it printed, the accounts it left, and the console's sign-ins with its secrets. */
async function serveOnce(env: Record<string, string>, args: string[] = []): Promise<Served> {
  runs += 1;
  const databaseUrl = `sqlite:${join(folder, `run-${runs}.db`)}`;
  const gateway = await startGatewayProcess({ TOLLGATE_DATABASE_URL: databaseUrl, ...env }, args);
  let output: string;
  const signIns: Served['signIns'] = [];
  try {
    // The banner is written in one piece once listening; healthz proves start-up is over.
    expect((await fetch(`${gateway.baseUrl}/healthz`)).status).toBe(200);
    output = gateway.output();
    expect(output).toContain(`Web console: ${gateway.baseUrl}/console/`);
    expect((await fetch(`${gateway.baseUrl}/console/`)).status).toBe(200);
    for (const secret of output.match(/^ {2}(sk-tg-\S+|tg-admin-\S+)$/gm) ?? []) {
      const response = await signIn(gateway.baseUrl, secret.trim());
      const body = (await response.json()) as { kind?: unknown; admin_token?: { role?: unknown } };
      signIns.push({ secret: secret.trim(), status: response.status, role: body.admin_token?.role ?? body.kind });
    }
  } finally {
    expect(await gateway.stop()).toBe(0);
  }
  const store = await openStore(databaseUrl, { migrate: false });
  try {
    const accounts = (await store.listAccounts()).map(({ name, balanceNanos }) => ({ name, balanceNanos }));
    return { output, accounts, signIns };
  } finally {
    await store.close();
  }
}

describe('the demo account on a fresh database', () => {
  it("is not created with an operator's catalog, and no key is printed", async () => {
    const { output, accounts } = await serveOnce({ TOLLGATE_CONFIG: catalogPath, TOLLGATE_LOG_LEVEL: 'info' });
    expect(accounts).toEqual([]);
    expect(output).not.toContain('sk-tg-');
    expect(output).toMatch(/Tollgate is listening on/);
    expect(output).toMatch(/keys create --account NAME/);
    expect(output).toMatch(/Sign in to the console with an admin token: npx tollgate admin-tokens create --role owner/);
  }, 60_000);

  it('is created with the built-in demo catalog, its key printed with curl lines', async () => {
    const { output, accounts, signIns } = await serveOnce({ TOLLGATE_CONFIG: '' });
    expect(accounts).toEqual([{ name: 'demo', balanceNanos: 5_000_000_000n }]);
    expect(output).toMatch(/Created the demo account with \$5 and this API key/);
    expect(output).toMatch(/\n {2}sk-tg-[A-Za-z0-9]{40}\n/);
    // Chat and Responses, then embeddings and moderations (the demo catalog serves both).
    expect(output.match(/curl http/g)).toHaveLength(4);
    // An owner token for the console beside the key; each signs in as what it is.
    expect(output).toMatch(/and an owner admin token, to sign in to the console as the operator \(shown once, keep it\):\n {2}\S+\n/);
    expect(signIns).toEqual([
      { secret: expect.stringMatching(/^sk-tg-/), status: 201, role: 'key' },
      { secret: expect.stringMatching(/^tg-admin-/), status: 201, role: 'owner' },
    ]);
  }, 60_000);

  it("is created with an operator's catalog when asked with --demo", async () => {
    const { output, accounts } = await serveOnce({ TOLLGATE_CONFIG: catalogPath }, ['--demo']);
    expect(accounts).toEqual([{ name: 'demo', balanceNanos: 5_000_000_000n }]);
    expect(output).toMatch(/\n {2}sk-tg-[A-Za-z0-9]{40}\n/);
  }, 60_000);

  it("is created with an operator's catalog when asked with TOLLGATE_DEMO=1", async () => {
    const { output, accounts } = await serveOnce({ TOLLGATE_CONFIG: catalogPath, TOLLGATE_DEMO: '1' });
    expect(accounts.map((account) => account.name)).toEqual(['demo']);
    expect(output).toMatch(/\n {2}sk-tg-[A-Za-z0-9]{40}\n/);
  }, 60_000);
});
