/**
 * What `buildProgram` (program.ts) hands to each command group (account-commands.ts,
 * key-commands.ts, …). Types only, so that the groups can name it without importing the program
 * that imports them.
 */
import type { Command } from 'commander';
import type { Store } from '../store/store.js';
import type { CliIo, CommandOutput } from './cli-io.js';

/** Handed to each command group so they share one way to open the store and print. */
export interface CommandContext {
  io: CliIo;
  /** The database URL: `--database`, else the environment, else the default. */
  databaseUrl(command: Command): string;
  /**
   * A commander action that opens the store (creating or upgrading the schema), runs `handler`,
   * prints its output and closes the store, also when the handler fails.
   */
  storeAction(handler: (store: Store, command: Command) => Promise<CommandOutput>): (...args: unknown[]) => Promise<void>;
}
