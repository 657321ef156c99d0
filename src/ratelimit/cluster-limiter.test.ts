/**
 * The cluster limiter in a real cluster: this test process is the primary and forks worker
 * processes that run the limiter modules (transpiled to a temporary folder, since workers run
 * plain Node) and report their decisions back over IPC.
 */
import cluster, { type Worker } from 'node:cluster';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterWorkerLimiter, startClusterLimiterPrimary } from './cluster-limiter.js';
import type { LimitDecision } from './limiter.js';

const here = dirname(fileURLToPath(import.meta.url));
const MODULES = ['limiter.ts', 'failure-policy.ts', 'cluster-limiter.ts'];

/** Each worker: make the limiter, wait for `go`, consume concurrently as told, send the decisions. */
const WORKER_SCRIPT = `
import { createClusterWorkerLimiter } from './cluster-limiter.js';
const limiter = createClusterWorkerLimiter({ onFailure: 'closed', timeoutMs: Number(process.env.TIMEOUT_MS) });
process.on('message', async (message) => {
  if (message?.type !== 'go') return;
  const decisions = await Promise.all(
    Array.from({ length: message.attempts }, () => limiter.consume(message.subject, 1, message.limit, 60)),
  );
  process.send({ type: 'decisions', decisions });
});
process.send({ type: 'ready' });
`;

let folder = '';

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'tollgate-cluster-'));
  // The transpiled modules import rate-limiter-flexible and prom-client: resolve them from the repository.
  symlinkSync(resolve(here, '../../node_modules'), join(folder, 'node_modules'), 'dir');
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ type: 'module' }));
  for (const name of MODULES) {
    const source = readFileSync(join(here, name), 'utf8');
    const output = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
    writeFileSync(join(folder, name.replace(/\.ts$/, '.js')), output.outputText);
  }
  writeFileSync(join(folder, 'worker.js'), WORKER_SCRIPT);
  cluster.setupPrimary({ exec: join(folder, 'worker.js'), execArgv: [], silent: false });
});

afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

async function runWorkers(count: number, task: { subject: string; limit: number; attempts: number }, timeoutMs: number): Promise<LimitDecision[]> {
  const workers: Worker[] = Array.from({ length: count }, () => cluster.fork({ TIMEOUT_MS: String(timeoutMs) }));
  try {
    const answers = workers.map(
      (worker) =>
        new Promise<LimitDecision[]>((resolveAnswer, reject) => {
          worker.on('message', (message: { type: string; decisions?: LimitDecision[] }) => {
            if (message.type === 'ready') worker.send({ type: 'go', ...task });
            if (message.type === 'decisions' && message.decisions !== undefined) resolveAnswer(message.decisions);
          });
          worker.on('exit', (code) => reject(new Error(`worker exited with ${code}`)));
        }),
    );
    return (await Promise.all(answers)).flat();
  } finally {
    for (const worker of workers) worker.kill();
  }
}

describe('cluster limiter', () => {
  it('refuses to run outside a cluster worker', () => {
    expect(() => createClusterWorkerLimiter()).toThrow(/cluster worker/);
  });

  // Runs before the primary is started: nothing answers the workers.
  it('applies the failure policy when the primary does not answer, without hanging', async () => {
    const decisions = await runWorkers(1, { subject: 'unanswered', limit: 5, attempts: 2 }, 200);
    expect(decisions).toEqual([
      { allowed: false, limit: 5, remaining: 0, resetMs: 1_000 },
      { allowed: false, limit: 5, remaining: 0, resetMs: 1_000 },
    ]);
  });

  it('admits exactly the limit across three workers consuming concurrently', async () => {
    startClusterLimiterPrimary();
    const decisions = await runWorkers(3, { subject: 'shared', limit: 25, attempts: 20 }, 5_000);
    expect(decisions).toHaveLength(60);
    const admitted = decisions.filter((decision) => decision.allowed);
    expect(admitted).toHaveLength(25);
    expect(admitted.map((decision) => decision.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });
});
