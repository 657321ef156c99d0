/**
 * `npm run bench:postgres-commit` (after `npm run build`): how long a hold's open and settle take
 * on PostgreSQL, one request at a time, in the two ways a batch commits (docs/architecture.md,
 * Money: "Group commit"): committed without waiting and then flushed (`pipelined`, a batch formed
 * while another ran) and committed durably in its own statement (`durably`, a batch from an idle
 * queue). The built store's own functions on a fresh database of the server (dropped afterwards),
 * the two modes interleaved in rounds so that a noisy machine weighs on both alike.
 *
 * The server: --postgres-url, else TOLLGATE_BENCH_POSTGRES_URL, else TOLLGATE_TEST_POSTGRES_URL.
 */
import { parseArgs } from 'node:util';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createBenchDatabase, dropBenchDatabaseSync } from './postgres.mjs';

const { values: flags } = parseArgs({ options: { 'postgres-url': { type: 'string' }, rounds: { type: 'string', default: '6' }, requests: { type: 'string', default: '300' } } });
const postgresUrl = [flags['postgres-url'], process.env.TOLLGATE_BENCH_POSTGRES_URL, process.env.TOLLGATE_TEST_POSTGRES_URL].find((url) => url !== undefined && url !== '');
if (postgresUrl === undefined) {
  process.stderr.write('bench/postgres-commit.mjs: no PostgreSQL URL (--postgres-url, TOLLGATE_BENCH_POSTGRES_URL or TOLLGATE_TEST_POSTGRES_URL)\n');
  process.exit(2);
}
const dist = new URL('../dist/store/', import.meta.url);
const { openStore } = await import(new URL('open-store.js', dist).href);
const { createDurableFlush } = await import(new URL('postgres/postgres-flush.js', dist).href);
const { createPostgresPipelinedHoldBatchCommit } = await import(new URL('postgres/postgres-hold-batch.js', dist).href);
const { openOperation, settleOperation } = await import(new URL('hold-operations.js', dist).href);

const database = await createBenchDatabase(postgresUrl);
process.on('exit', () => dropBenchDatabaseSync(postgresUrl, database.name));
await (await openStore(database.url)).close();
const db = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url }) }) });
await db.insertInto('accounts').values({ id: 'acct_bench', name: 'bench', balance_nanos: 10n ** 15n, reserved_nanos: 0n, disabled: 0, created_at: 0 }).execute();
await db.insertInto('api_keys').values({ id: 'key_bench', account_id: 'acct_bench', prefix: 'key_bench', hash: 'key_bench', created_at: 0 }).execute();
const commit = createPostgresPipelinedHoldBatchCommit(db, createDurableFlush(db));

let sequence = 0;
/** One hold opened and settled, each as a batch of its own; milliseconds. */
async function openAndSettle(underLoad) {
  const id = `hold_${(sequence += 1)}`;
  const started = process.hrtime.bigint();
  const hold = { id, accountId: 'acct_bench', keyId: 'key_bench', requestId: id, model: 'bench', amountNanos: 1_000n, expiresAt: new Date(Date.now() + 600_000) };
  const opened = await commit([openOperation(hold, new Date())], underLoad);
  await opened.durable;
  const charge = { requestId: id, keyId: 'key_bench', model: 'bench', costNanos: 500n, excessNanos: 0n, inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0 };
  const settled = await commit([settleOperation(id, charge, new Date())], underLoad);
  await settled.durable;
  if (!opened.outcomes[0].ok || !settled.outcomes[0].ok) throw new Error('a hold was refused');
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const modes = { pipelined: true, durably: false };
const times = { pipelined: [], durably: [] };
const rounds = Number(flags.rounds);
const requests = Number(flags.requests);
for (let round = 0; round <= rounds; round++) {
  for (const [mode, underLoad] of Object.entries(modes)) {
    for (let index = 0; index < requests; index++) {
      const ms = await openAndSettle(underLoad);
      // Round 0 warms up.
      if (round > 0) times[mode].push(ms);
    }
  }
}
await db.destroy();
const at = (sorted, share) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))].toFixed(3);
process.stdout.write(`open + settle of one hold, one request at a time, ${rounds} rounds of ${requests} per mode:\n`);
for (const [mode, list] of Object.entries(times)) {
  list.sort((a, b) => a - b);
  process.stdout.write(`  ${mode.padEnd(9)}  p50 ${at(list, 0.5)} ms  p90 ${at(list, 0.9)} ms  p99 ${at(list, 0.99)} ms\n`);
}
