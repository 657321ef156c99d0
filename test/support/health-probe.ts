/**
 * Probes `/healthz` from a process of its own, one request at a time, the way an operator's health
 * checker does, and reports each answer's time. A probe inside the test's own process would also
 * measure the test's client (every fetch takes several turns of the shared event loop), not only
 * how long the gateway keeps its loop.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const PROBER = `
const url = process.argv[1];
for (;;) {
  const started = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  process.stdout.write(response.status + ' ' + (performance.now() - started).toFixed(1) + '\\n');
}
`;

export interface HealthProbe {
  /** Stops probing; every answer's status and time in ms, in order. */
  stop(): Promise<Array<{ status: number; ms: number }>>;
}

/** Starts probing `<baseUrl>/healthz`; resolves once the first probe has answered (the prober is warm). */
export async function startHealthProbe(baseUrl: string): Promise<HealthProbe> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', PROBER, `${baseUrl}/healthz`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const answers: Array<{ status: number; ms: number }> = [];
  const lines = createInterface({ input: child.stdout });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let warm = false;
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    void exited.then(() => reject(new Error('the health prober exited before its first probe')));
    lines.on('line', (line) => {
      // The first answer warms the prober up (its first fetch loads undici); it is not counted.
      if (!warm) {
        warm = true;
        resolve();
        return;
      }
      const [status, ms] = line.split(' ');
      answers.push({ status: Number(status), ms: Number(ms) });
    });
  });
  return {
    async stop() {
      child.kill();
      await exited;
      return answers;
    },
  };
}
