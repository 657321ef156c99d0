/**
 * Runs a CLI under test to completion with a time limit. It gets its own process group, so that on
 * timeout everything it started is killed with it.
 */
import { spawn } from 'node:child_process';

export interface SpawnOutcome {
  /** null when the run was killed. */
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

export function spawnBounded(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<SpawnOutcome> {
  return new Promise((resolve, reject) => {
    // stdin closed: a CLI that reads piped stdin into its prompt would otherwise wait for it.
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, timedOut, stdout, stderr });
    });
  });
}
