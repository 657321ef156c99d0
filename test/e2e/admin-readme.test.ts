/**
 * The README's admin API curl lines, run as printed against a real server: only the address is
 * swapped for the test server's, and `ADMIN_TOKEN` is an operator token, as the README says.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminToken } from '../../src/admin/admin-tokens.js';
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

/** Every curl line of the section's `sh` blocks, in order (up to the next section). */
function readmeAdminCurls(): string[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('## Admin API');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  return blocks.flatMap((block) => block.split('\n')).filter((line) => line.startsWith('curl '));
}

describe.skipIf(!hasCurl)('README admin API examples', () => {
  let harness: Harness;
  let token: string;

  beforeAll(async () => {
    harness = await startHarness();
    token = (await createAdminToken(harness.store, { role: 'operator' })).secret;
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
});
