/**
 * The README's admin API curl lines, run as printed against a real server: only the address is
 * swapped for the test server's, `ADMIN_TOKEN` is an operator token and `KEY_ID` the id the keys
 * example created, as the README says.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount } from '../../src/admin/accounts.js';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
import { CLI_ACTOR } from '../../src/admin/audit.js';
import { createKey } from '../../src/admin/keys.js';
import { parseCsvRecords } from '../support/csv.js';
import { startHarness, type Harness } from '../support/harness.js';

const run = promisify(execFile);
const README_ADDRESS = 'http://127.0.0.1:8080';

const hasCurl = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!hasCurl) console.info('README admin API test skipped: curl is not installed.');

/** The curl lines of the first sh block after `heading`. */
function readmeCurls(heading: string): string[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start))?.[1] ?? '';
  return block.split('\n').filter((line) => line.startsWith('curl '));
}

/** Every curl line of the Admin API section's `sh` blocks, in order, up to its request log part (tested on its own below). */
function readmeAdminCurls(): string[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('## Admin API');
  const end = readme.indexOf('\n### Request log', start + 1);
  expect(end).toBeGreaterThan(start);
  const section = readme.slice(start, end);
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  return blocks.flatMap((block) => block.split('\n')).filter((line) => line.startsWith('curl '));
}

/** Runs a README curl line as printed (against the test server); resolves with its status and body. */
async function runCurl(curl: string, baseUrl: string, token: string, env: Record<string, string> = {}): Promise<{ status: string; body: string }> {
  expect(curl).toContain(README_ADDRESS);
  const line = curl.replaceAll(README_ADDRESS, baseUrl);
  const { stdout } = await run('sh', ['-c', `${line} -w '\\n%{http_code}'`], { env: { ...process.env, ADMIN_TOKEN: token, ...env } });
  return { status: stdout.slice(stdout.lastIndexOf('\n') + 1), body: stdout.slice(0, stdout.lastIndexOf('\n')) };
}

describe.skipIf(!hasCurl)('README admin API examples', () => {
  let harness: Harness;
  let token: string;

  beforeAll(async () => {
    harness = await startHarness();
    token = (await createAdminToken(harness.store, { role: 'operator' }, CLI_ACTOR)).secret;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('every curl line works as printed, in order', async () => {
    const curls = readmeAdminCurls();
    expect(curls.length).toBeGreaterThanOrEqual(10);
    const answers: Array<Record<string, unknown>> = [];
    for (const curl of curls) {
      expect(curl).toContain(README_ADDRESS);
      const line = curl.replaceAll(README_ADDRESS, harness.baseUrl);
      const { stdout } = await run('sh', ['-c', `${line} -w '\\n%{http_code}'`], { env: { ...process.env, ADMIN_TOKEN: token } });
      const status = stdout.slice(stdout.lastIndexOf('\n') + 1);
      expect(['200', '201'], `${curl}\n${stdout}`).toContain(status);
      answers.push(JSON.parse(stdout.slice(0, stdout.lastIndexOf('\n'))) as Record<string, unknown>);
    }
    const answerTo = (path: string) => answers[curls.findIndex((curl) => curl.includes(path))];
    const account = await harness.store.findAccount('globex');
    expect(account).toMatchObject({ balanceNanos: 12_500_000_000n, disabled: true, lowBalanceThresholdNanos: 5_000_000_000n });
    expect(answerTo('/audit?')?.data).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'account.disable', target_id: account?.id })]));
    const catalog = answerTo('/catalog');
    expect(catalog?.models).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'model-5.6', prices: expect.objectContaining({ input_usd: '1' }) })]));
    expect(catalog?.targets).toEqual(expect.arrayContaining([expect.objectContaining({ target: 'sim/model-5.6', status: 'healthy' })]));
    expect(answerTo('/alerts/deliveries')).toEqual({ data: [], has_more: false, next_cursor: null });
  });

  it('the request log and usage curl lines work as printed and show a request just made', async () => {
    const curls = readmeCurls('### Request log');
    expect(curls.length).toBeGreaterThanOrEqual(6);
    await createAccount(harness.store, { name: 'acme', balanceUsd: '5' }, CLI_ACTOR);
    const { secret } = await createKey(harness.store, { accountRef: 'acme' }, CLI_ACTOR);
    const sent = await harness.post('/v1/chat/completions', { model: 'model-5.6', messages: [{ role: 'user', content: 'Hi' }] }, secret);
    expect(sent.status).toBe(200);
    await sent.text();
    const requestId = sent.headers.get('x-request-id') ?? '';
    await vi.waitFor(async () => expect((await harness.store.listRequestLog({ requestId }, { limit: 1 })).rows).toHaveLength(1), { timeout: 5_000 });
    const answers: string[] = [];
    for (const curl of curls) {
      const { status, body } = await runCurl(curl, harness.baseUrl, token);
      expect(status, `${curl}\n${body}`).toBe('200');
      answers.push(body);
    }
    const [logJson, logCsv, usageJson, usageCsv, chatLogJson, byEndpointJson] = answers as [string, string, string, string, string, string];
    const rows = (JSON.parse(logJson) as { data: Array<{ request_id: string; status: number }> }).data;
    expect(rows.map((row) => row.request_id)).toContain(requestId);
    expect(parseCsvRecords(logCsv).header[0]).toBe('at');
    expect(JSON.parse(usageJson)).toMatchObject({ by: 'day', rows: expect.any(Array) });
    const keys = parseCsvRecords(usageCsv);
    expect(keys.header[0]).toBe('key');
    expect(keys.records).toEqual([expect.objectContaining({ requests: '1', errors: '0' })]);
    const chatRows = (JSON.parse(chatLogJson) as { data: Array<{ request_id: string; surface: string }> }).data;
    expect(chatRows.map((row) => row.request_id)).toContain(requestId);
    expect(new Set(chatRows.map((row) => row.surface))).toEqual(new Set(['chat-completions']));
    expect(JSON.parse(byEndpointJson)).toMatchObject({ by: 'endpoint', rows: expect.arrayContaining([expect.objectContaining({ group: 'chat-completions', requests: expect.any(Number) })]) });
  });

  it('the keys curl lines work as printed, KEY_ID being the id the first one answered', async () => {
    const curls = readmeCurls('### Keys');
    expect(curls.length).toBeGreaterThanOrEqual(7);
    if ((await harness.store.findAccount('globex')) === undefined) await createAccount(harness.store, { name: 'globex' }, CLI_ACTOR);
    const [first = '', ...rest] = curls;
    const created = await runCurl(first, harness.baseUrl, token);
    expect(created.status, created.body).toBe('201');
    const key = JSON.parse(created.body) as Record<string, unknown>;
    expect(key).toMatchObject({ budget: { period: 'day', limit_usd: '5' }, key: expect.stringMatching(/^sk-tg-/) });
    const answers: Array<Record<string, unknown>> = [];
    for (const curl of rest) {
      const { status, body } = await runCurl(curl, harness.baseUrl, token, { KEY_ID: String(key.id) });
      expect(status, `${curl}\n${body}`).toBe('200');
      answers.push(JSON.parse(body) as Record<string, unknown>);
    }
    const stored = await harness.store.findKey(String(key.id));
    expect(stored).toMatchObject({ tokensPerMinute: 100_000, budget: { period: 'month', limitNanos: 20_000_000_000n }, deletedAt: expect.any(Date) });
    expect(stored?.prefix).not.toBe(key.prefix);
    // The audit log lists newest first.
    expect((answers.at(-1)?.data as Array<{ action: string }>).map((row) => row.action)).toEqual(['key.delete', 'key.rotate', 'key.update', 'key.create']);
  });
});
