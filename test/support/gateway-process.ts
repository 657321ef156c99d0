/**
 * Runs the built gateway (`dist/cli/main.js`) as real processes, for the tests that need several
 * instances, workers, signals and kills. Every process is killed when the test ends.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'dist/cli/main.js');

/** Builds dist/ when a test runs without `npm test` having built it. */
export function ensureBuilt(): void {
  if (!existsSync(MAIN)) execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
}

export function writeCatalog(catalog: unknown): string {
  const folder = mkdtempSync(join(tmpdir(), 'tollgate-catalog-'));
  const path = join(folder, 'catalog.yaml');
  writeFileSync(path, stringify(catalog));
  return path;
}

export interface GatewayProcess {
  baseUrl: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then wait for the exit code. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startGatewayProcess(env: Record<string, string>, args: string[] = []): Promise<GatewayProcess> {
  ensureBuilt();
  const child = spawn(process.execPath, [MAIN, 'serve', ...args], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', TOLLGATE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  exited.then(() => running.delete(child), () => undefined);
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${text}`)), 30_000);
    const check = () => {
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolvePort(Number(match[1]));
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}:\n${text}`));
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    output: () => text,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
