/**
 * A key holder's usage and requests over HTTP (`/console/api/self/usage`, `/console/api/self/requests`):
 * filtered to the session's key by the server. Another key of the same account and a key of another
 * account make requests too; the holder sees none of them, whatever it asks for (their request ids,
 * their models), by session cookie or by the key as a bearer token. Bad queries are 400s.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { formatUsd } from '../../src/billing/money.js';
import { consoleCookie, signIn } from '../support/console-session.js';
import { engines } from '../support/databases.js';
import { startHarness, type Harness } from '../support/harness.js';

const run = promisify(execFile);
const hasCurl = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

interface LogRow {
  request_id: string;
  key_id: string;
  account_id: string;
  cost_usd: string;
}

describe.each(engines)("a key holder's own usage and requests on %s", (engine) => {
  let harness: Harness;
  let holder: { accountId: string; keyId: string; secret: string };
  let sibling: { id: string; secret: string };
  let other: { accountId: string; keyId: string; secret: string };
  let cookie: string;
  const ids: Record<'holder' | 'sibling' | 'other', string[]> = { holder: [], sibling: [], other: [] };

  async function send(secret: string, model = 'model-5.6'): Promise<string> {
    const response = await harness.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Count to three.' }] }, secret);
    expect(response.status).toBe(200);
    await response.text();
    return response.headers.get('x-request-id') ?? '';
  }

  async function self(path: string, auth: 'cookie' | 'bearer' = 'cookie'): Promise<{ status: number; body: Record<string, unknown> }> {
    const headers: Record<string, string> = auth === 'cookie' ? { cookie } : { authorization: `Bearer ${holder.secret}` };
    const response = await fetch(`${harness.baseUrl}/console/api/self${path}`, { headers });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  beforeAll(async () => {
    harness = await startHarness({ engine });
    holder = await harness.newAccount('10', { name: 'laptop' });
    const created = await createKey(harness.store, { accountRef: holder.accountId, name: 'sibling' }, CLI_ACTOR);
    sibling = { id: created.key.id, secret: created.secret };
    other = await harness.newAccount('10', { name: 'other' });
    cookie = consoleCookie(await signIn(harness.baseUrl, holder.secret));
    ids.holder.push(await send(holder.secret), await send(holder.secret, 'model-5.6-mini'));
    ids.sibling.push(await send(sibling.secret));
    ids.other.push(await send(other.secret), await send(other.secret, 'model-5.6-mini'));
    // The log is written in batches: wait until every request is in it.
    await vi.waitFor(
      async () => {
        for (const [secret, count] of [[holder.secret, 2], [sibling.secret, 1], [other.secret, 2]] as const) {
          const response = await fetch(`${harness.baseUrl}/console/api/self/requests`, { headers: { authorization: `Bearer ${secret}` } });
          expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(count);
        }
      },
      { timeout: 5_000, interval: 50 },
    );
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("lists only the key's own requests, by cookie and by bearer key", async () => {
    for (const auth of ['cookie', 'bearer'] as const) {
      const { status, body } = await self('/requests', auth);
      expect(status).toBe(200);
      const rows = body.data as LogRow[];
      expect(rows.map((row) => row.request_id).sort()).toEqual([...ids.holder].sort());
      expect(new Set(rows.map((row) => row.key_id))).toEqual(new Set([holder.keyId]));
      expect(body.has_more).toBe(false);
    }
  });

  it("finds nothing of another key's or account's, even by request id or model", async () => {
    for (const requestId of [...ids.sibling, ...ids.other]) {
      const { status, body } = await self(`/requests?request_id=${encodeURIComponent(requestId)}`);
      expect(status).toBe(200);
      expect(body.data).toEqual([]);
    }
    const mini = await self('/requests?model=model-5.6-mini');
    expect((mini.body.data as LogRow[]).map((row) => row.request_id)).toEqual([ids.holder[1]]);
  });

  it('pages with a cursor', async () => {
    const first = await self('/requests?limit=1');
    expect(first.body.has_more).toBe(true);
    const second = await self(`/requests?limit=1&cursor=${encodeURIComponent(String(first.body.next_cursor))}`);
    const seen = [...(first.body.data as LogRow[]), ...(second.body.data as LogRow[])].map((row) => row.request_id);
    expect(seen.sort()).toEqual([...ids.holder].sort());
    expect(second.body.has_more).toBe(false);
  });

  it("reports the key's own usage per day and hour: its requests and exact cost, nobody else's", async () => {
    const own = (await self('/requests')).body.data as LogRow[];
    const cost = own.reduce((sum, row) => sum + toNanos(row.cost_usd), 0n);
    for (const by of ['day', 'hour']) {
      const { status, body } = await self(`/usage?by=${by}`);
      expect(status).toBe(200);
      expect(body.by).toBe(by);
      expect(body.account_id).toBe(holder.accountId);
      const total = body.total as { requests: number; cost_usd: string; errors: number };
      expect(total.requests).toBe(2);
      expect(total.errors).toBe(0);
      expect(total.cost_usd).toBe(formatUsd(cost));
      expect((body.rows as Array<{ group: string }>)[0]?.group).toMatch(by === 'day' ? /T00:00:00\.000Z$/ : /:00:00\.000Z$/);
    }
    const future = await self('/usage?from=2999-01-01');
    expect((future.body.total as { requests: number }).requests).toBe(0);
  });

  it('refuses bad queries with 400 in the error format', async () => {
    for (const path of ['/usage?by=model', '/usage?from=yesterday', '/usage?from=2026-02-01&to=2026-01-01', '/usage?account=other', '/requests?key=' + other.keyId, '/requests?limit=0', '/requests?cursor=nonsense']) {
      const { status, body } = await self(path);
      expect(status, path).toBe(400);
      expect((body.error as { type: string }).type, path).toBe('invalid_request_error');
    }
  });

  it.skipIf(!hasCurl)("runs the README's usage curl line as printed (the address swapped for the test server's)", async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Web console'));
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const curl = block.split('\n').find((line) => line.includes('/console/api/self/usage')) ?? '';
    expect(curl).toContain('http://127.0.0.1:8080/console/api/self/usage');
    const { stdout } = await run('sh', ['-c', curl.replaceAll('http://127.0.0.1:8080', harness.baseUrl)], { env: { ...process.env, TOLLGATE_API_KEY: holder.secret } });
    const report = JSON.parse(stdout) as { by: string; total: { requests: number } };
    expect(report.by).toBe('hour');
    expect(report.total.requests).toBe(2);
  });

  it('needs a key holder: no credential is 401', async () => {
    const response = await fetch(`${harness.baseUrl}/console/api/self/requests`);
    expect(response.status).toBe(401);
  });
});

function toNanos(usd: string): bigint {
  const [whole = '0', fraction = ''] = usd.split('.');
  return BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0'));
}
