/**
 * Runs the real CLI in-process, as `tollgate ...argv` would, against a fresh SQLite file per test
 * (created before each test, removed after it). Test-only code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import type { ServeOptions } from '../../src/cli/cli-io.js';
import { runCli } from '../../src/cli/program.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliRunner {
  /** The current test's database (`sqlite:…`). */
  readonly databaseUrl: string;
  /** The current test's folder (the database lives in it). */
  readonly directory: string;
  /** What `serve` was asked to do in the current test (the server itself is not started). */
  readonly served: ServeOptions[];
  run(argv: string[], env?: Record<string, string | undefined>): Promise<CliRun>;
  /** Runs a command that must succeed and returns its parsed `--json` output. */
  json(argv: string[]): Promise<unknown>;
}

export function useCliOnTempDatabase(prefix = 'tollgate-cli-'): CliRunner {
  let directory = '';
  let served: ServeOptions[] = [];
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), prefix));
    served = [];
  });
  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });
  const runner: CliRunner = {
    get databaseUrl() {
      return `sqlite:${join(directory, 'tollgate.db')}`;
    },
    get directory() {
      return directory;
    },
    get served() {
      return served;
    },
    async run(argv, env = { TOLLGATE_DATABASE_URL: runner.databaseUrl }) {
      let stdout = '';
      let stderr = '';
      const code = await runCli(argv, {
        stdout: (text) => (stdout += text),
        stderr: (text) => (stderr += text),
        env,
        serve: async (options) => {
          served.push(options);
        },
      });
      return { code, stdout, stderr };
    },
    async json(argv) {
      const run = await runner.run([...argv, '--json']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout.endsWith('\n')).toBe(true);
      return JSON.parse(run.stdout) as unknown;
    },
  };
  return runner;
}
