/** `tollgate serve` and `tollgate migrate`. */
import type { Command } from 'commander';
import { AdminError } from '../admin/admin-error.js';
import { parsePositiveInteger } from '../admin/input.js';
import type { CommandContext } from './command-context.js';

export function registerServerCommands(program: Command, context: CommandContext): void {
  program
    .command('serve')
    .description('start the gateway')
    .option('--workers <count>', 'worker processes: a number or "auto"', '1')
    .option('--no-migrate', 'do not create or upgrade the database schema on start')
    .option('--demo', 'on a database without accounts, create a funded demo account and print its key (the default only with the built-in demo catalog)')
    .action(async (_options: unknown, command: Command) => {
      const options = command.opts<{ workers: string; migrate: boolean; demo?: boolean }>();
      await context.io.serve({
        workers: parseWorkers(options.workers),
        migrate: options.migrate,
        demo: options.demo === true,
        databaseUrl: context.databaseUrl(command),
      });
    });

  program
    .command('migrate')
    .description('create or upgrade the database schema, then exit')
    .action(
      context.storeAction(async (store) => ({
        json: { migrated: true, engine: store.engine },
        text: `Database schema is up to date (${store.engine}).`,
      })),
    );
}

function parseWorkers(value: string): string {
  const text = value.trim().toLowerCase();
  if (text === 'auto') return text;
  try {
    return String(parsePositiveInteger(text, '--workers'));
  } catch {
    throw new AdminError('invalid_input', `--workers must be "auto" or a whole number of at least 1 (got ${JSON.stringify(value)})`);
  }
}
