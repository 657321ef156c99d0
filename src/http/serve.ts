/**
 * `tollgate serve`: opens the store, builds the gateway, listens, and on a fresh database prints
 * the demo key once with curl lines that work as printed. SIGTERM/SIGINT drain in-flight requests
 * (their bills settle) before the process exits.
 */
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { ensureDemoAccount } from '../admin/demo.js';
import { loadConfig } from '../config/load.js';
import { DEFAULT_DATABASE_URL, DEFAULT_HOST, DEFAULT_PORT, ENV } from '../config/env.js';
import { createMemoryLimiter } from '../ratelimit/memory-limiter.js';
import { openStore } from '../store/open-store.js';
import { createGateway } from './gateway.js';

export interface ServeOptions {
  workers: string;
  migrate: boolean;
}

const DEMO_BALANCE_USD = '5';

export function createLogger(env: Readonly<Record<string, string | undefined>>): Logger {
  return pino({
    level: env[ENV.logLevel] ?? 'info',
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', 'secret'], censor: '[redacted]' },
  });
}

export async function runServe(options: ServeOptions, env: Readonly<Record<string, string | undefined>> = process.env): Promise<void> {
  if (options.workers !== '1') throw new Error('--workers other than 1 is not available yet; run one process per port');
  const host = env[ENV.host] ?? DEFAULT_HOST;
  const port = parsePort(env[ENV.port]);
  const logger = createLogger(env);
  const config = loadConfig(env[ENV.config]);
  const store = await openStore(env[ENV.databaseUrl] ?? DEFAULT_DATABASE_URL, { migrate: options.migrate });
  const limiter = createMemoryLimiter();
  const demo = await ensureDemoAccount(store, { balanceUsd: DEMO_BALANCE_USD });
  const gateway = await createGateway({ config, store, limiter, logger, env });
  await gateway.app.listen({ host, port });

  // With PORT=0 the system picks the port: print the one actually bound.
  const bound = gateway.app.server.address() as AddressInfo;
  const base = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${bound.port}`;
  process.stdout.write(banner(base, demo?.secret, config.models[0]?.id ?? 'model-5.6'));

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining in-flight requests');
    await gateway.close();
    await limiter.close();
    await store.close();
    logger.info('stopped');
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      stop(signal).then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

function parsePort(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_PORT;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`PORT must be a port number, got ${JSON.stringify(value)}`);
  return port;
}

/** What a newcomer sees: where to point a client and, on a fresh database, the demo key and curl lines. */
export function banner(base: string, secret: string | undefined, model: string): string {
  const lines = [`Tollgate is listening on ${base}  (OpenAI base URL: ${base}/v1)`];
  if (secret !== undefined) {
    const auth = `-H "Authorization: Bearer ${secret}" -H "Content-Type: application/json"`;
    lines.push(
      '',
      `Created the demo account with $${DEMO_BALANCE_USD} and this API key (shown once, keep it):`,
      `  ${secret}`,
      '',
      'Try it:',
      `  curl ${base}/v1/chat/completions ${auth} -d '{"model":"${model}","messages":[{"role":"user","content":"Hello!"}]}'`,
      `  curl ${base}/v1/responses ${auth} -d '{"model":"${model}","input":"Hello!","reasoning":{"effort":"low"}}'`,
    );
  } else {
    lines.push('Create a key with: npx tollgate keys create --account demo');
  }
  return `${lines.join('\n')}\n\n`;
}
