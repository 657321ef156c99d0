/**
 * The `tollgate` command line, built from what it is given (`CliIo`) so tests can run it in-process
 * against a real database. Parsing only: every command calls an admin service and prints its result
 * as an aligned table or, with `--json`, as one line of JSON. Expected failures (bad input, unknown
 * account) print one line on stderr and give exit code 1, never a stack trace.
 */
import { Command, CommanderError } from 'commander';
import { AdminError } from '../admin/admin-error.js';
import { DEFAULT_DATABASE_URL, ENV } from '../config/env.js';
import { openStore } from '../store/open-store.js';
import { registerAccountCommands } from './account-commands.js';
import { registerAdminTokenCommands } from './admin-token-commands.js';
import { announceKeyChange } from './announce.js';
import type { CliIo } from './cli-io.js';
import type { CommandContext } from './command-context.js';
import { registerKeyCommands } from './key-commands.js';
import { registerServerCommands } from './server-commands.js';
import { registerUsageCommand } from './usage-command.js';

interface GlobalOptions {
  database?: string;
  json?: boolean;
}

/** Builds the program; `runCli` is the usual entry. Errors escape `parseAsync` for the caller. */
export function buildProgram(io: CliIo, options: { json: boolean }): Command {
  const program = new Command('tollgate')
    .description('Tollgate, an OpenAI-compatible model gateway: serve it and administer accounts, keys and usage.')
    .option('--database <url>', `database URL (default: $${ENV.databaseUrl} or ${DEFAULT_DATABASE_URL})`)
    .option('--json', 'print results as JSON')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      outputError: (text, write) => write(options.json ? `${JSON.stringify({ error: stripErrorLabel(text) })}\n` : text),
    });

  const context: CommandContext = {
    io,
    databaseUrl: (command) => resolveDatabaseUrl(command.optsWithGlobals<GlobalOptions>().database, io.env),
    storeAction: (handler) => async (...args) => {
      const command = args.at(-1);
      if (!(command instanceof Command)) throw new Error('commander did not pass the command to its action');
      const store = await openStore(context.databaseUrl(command), { migrate: true });
      try {
        const output = await handler(store, command);
        if (output.keysChanged === true) await announceKeyChange(io);
        io.stdout(`${options.json ? JSON.stringify(output.json) : output.text}\n`);
      } finally {
        await store.close();
      }
    },
  };

  registerServerCommands(program, context);
  registerAccountCommands(program, context);
  registerKeyCommands(program, context);
  registerAdminTokenCommands(program, context);
  registerUsageCommand(program, context);
  return program;
}

/**
 * Runs one command line (`argv` without the node and script paths) and returns the exit code: 0 on
 * success, 1 on an error the operator can fix (printed as one line), commander's code otherwise.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // Known before parsing so that parse errors, too, come out as JSON.
  const json = argv.includes('--json');
  try {
    await buildProgram(io, { json }).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    // Commander has printed its own message (or the help) already.
    if (error instanceof CommanderError) return error.exitCode;
    reportError(io, error, json);
    return 1;
  }
}

function reportError(io: CliIo, error: unknown, json: boolean): void {
  const message = error instanceof Error ? error.message : String(error);
  io.stderr(json ? `${JSON.stringify({ error: message })}\n` : `error: ${message}\n`);
  // Admin errors are the operator's to fix; anything else is ours, so say where when asked to.
  const verbose = ['debug', 'trace'].includes(io.env[ENV.logLevel] ?? '');
  if (!(error instanceof AdminError) && verbose && error instanceof Error && error.stack !== undefined) {
    io.stderr(`${error.stack}\n`);
  }
}

function resolveDatabaseUrl(option: string | undefined, env: CliIo['env']): string {
  for (const candidate of [option, env[ENV.databaseUrl]]) {
    if (candidate !== undefined && candidate.trim() !== '') return candidate.trim();
  }
  return DEFAULT_DATABASE_URL;
}

function stripErrorLabel(text: string): string {
  return text.replace(/^error:\s*/, '').trim();
}
