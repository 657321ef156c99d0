/**
 * What a newcomer does: `npm start` on a fresh database prints a key and curl lines, and the curl
 * lines work exactly as printed. A second start on the same database prints no new key.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const hasCurl = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!hasCurl) console.info('start test skipped: curl is not installed, so the printed curl lines cannot be run as printed.');

/**
 * `npm start`: its `prestart` builds, then it serves. `build: false` skips the `prestart` (npm's
 * `--ignore-scripts` skips only pre- and post-scripts): the build a first start proved is not redone.
 */
function start(databaseUrl: string, { build }: { build: boolean }): { child: ChildProcess; output: Promise<string> } {
  const child = spawn('npm', ['start', '--silent', ...(build ? [] : ['--ignore-scripts'])], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', TOLLGATE_DATABASE_URL: databaseUrl, TOLLGATE_LOG_LEVEL: 'warn', TOLLGATE_CONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output = new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no banner in time:\n${text}`)), 60_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (/Tollgate is listening/.test(text) && (/\/v1\/responses .*\n/.test(text) || /keys create/.test(text))) {
        clearTimeout(timer);
        resolve(text);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${text}`)));
  });
  return { child, output };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    process.kill(-child.pid!, 'SIGTERM');
  });
}

describe.skipIf(!hasCurl)('npm start on a fresh database', () => {
  let folder: string;
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'tollgate-start-'));
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('prints a key once, with curl lines that work as printed', async () => {
    const databaseUrl = `sqlite:${join(folder, 'tollgate.db')}`;
    const first = start(databaseUrl, { build: true });
    let banner: string;
    try {
      banner = await first.output;
      const key = /\n\s+(sk-tg-[A-Za-z0-9]{40})\n/.exec(banner)?.[1];
      expect(key).toBeDefined();
      const curls = banner.split('\n').map((line) => line.trim()).filter((line) => line.startsWith('curl '));
      expect(curls).toHaveLength(4);
      expect(curls[0]).toContain('/v1/chat/completions');
      expect(curls[1]).toContain('/v1/responses');
      expect(curls[2]).toContain('/v1/embeddings');
      expect(curls[3]).toContain('/v1/moderations');
      for (const curl of curls) {
        const answer = execFileSync('sh', ['-c', `${curl} -s -w '\\n%{http_code}'`], { encoding: 'utf8' });
        const [body, status] = [answer.slice(0, answer.lastIndexOf('\n')), answer.slice(answer.lastIndexOf('\n') + 1)];
        expect(status).toBe('200');
        const parsed = JSON.parse(body) as { object?: string; id: string };
        expect(['chat.completion', 'response', 'list', undefined]).toContain(parsed.object);
        if (parsed.object === undefined) expect(parsed.id).toMatch(/^modr-/);
      }
    } finally {
      await stop(first.child);
    }

    // The same start again, less its build (the first one's dist/ is still there).
    const second = start(databaseUrl, { build: false });
    try {
      const again = await second.output;
      expect(again).not.toMatch(/sk-tg-/);
      expect(again).toMatch(/keys create/);
    } finally {
      await stop(second.child);
    }
  }, 120_000);
});
