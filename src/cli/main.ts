#!/usr/bin/env node
/**
 * The `tollgate` executable: the only module that touches the process. It hands argv, the standard
 * streams and the environment to `runCli` and turns its result into the exit code.
 */
import { ENV } from '../config/env.js';
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  serve: async ({ databaseUrl, ...options }) => {
    // Loaded only for `serve`, so admin commands start without the HTTP stack.
    const { runServe } = await import('../server/serve.js');
    // runServe reads its database from the environment it is given; --database must win there.
    await runServe(options, { ...process.env, [ENV.databaseUrl]: databaseUrl });
  },
});
