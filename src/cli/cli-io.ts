/**
 * What the CLI is given instead of touching the process: writers for stdout and stderr, the
 * environment, and the server starter. `main.ts` wires these to the real process; tests pass their
 * own and read what was written.
 */

export interface ServeOptions {
  /** `auto` or a whole number ≥ 1, already checked. */
  workers: string;
  migrate: boolean;
  /** `--demo`: create the demo account on a fresh database even with an operator's catalog. */
  demo: boolean;
  /** The database the server should use (from `--database`, the environment, or the default). */
  databaseUrl: string;
}

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Starts the gateway and resolves when it stops. */
  serve: (options: ServeOptions) => Promise<void>;
}

/** What a command prints: `json` under `--json`, `text` otherwise. Both end without a newline. */
export interface CommandOutput {
  json: unknown;
  text: string;
  /** The command changed a key: running instances are told at once (through Redis, when configured). */
  keysChanged?: boolean;
}
