/**
 * `npm run bench`: measures the built gateway against a mock upstream on loopback, and checks the
 * targets of issues 9, 10 and 22 (see targets.mjs) against the bare proxy measured in the same run.
 *
 * Scenarios: `chat`, `chat-stream`, `responses` and `embeddings` on the pass-through path, and two
 * translated routes, `responses-via-chat` (Responses onto a Chat-Completions-only upstream) and
 * `responses-via-anthropic` (Responses onto Anthropic's Messages API).
 *
 * Targets, each a child process killed on exit:
 * - `direct` (the mock itself), `bare-proxy` (a bare undici proxy, the yardstick), `tollgate-1` and
 *   `tollgate-<N>` (`serve --workers 1` and `--workers N`, SQLite; with --workers-list, one
 *   `tollgate-<N>` for each N above 1): every pass-through scenario at every concurrency;
 * - `tollgate-1-pg` (one instance on PostgreSQL + Redis) and `tollgate-3x-pg` (three `serve
 *   --workers 1` instances on one PostgreSQL database and Redis, the load generator spreading the
 *   connections evenly over them; at the concurrencies of at least 3): each on a fresh database
 *   created for the run and dropped at its end (see bench/postgres.mjs for where the URLs come
 *   from), every pass-through scenario; --no-pg leaves both out;
 * - variants of the one-worker gateway, measured at c16 only (every concurrency with --all-cells):
 *   `tollgate-1-nolog` (the request log off; --no-log-compare leaves it out) and `tollgate-1-traced`
 *   (OpenTelemetry on, OTLP/HTTP protobuf to a sink that discards, bench/otlp-sink.mjs;
 *   --no-traces leaves it out);
 * - the translated scenarios run on `tollgate-1` alone, at c16 (every concurrency with --all-cells).
 * After the cells, tollgate-1's idle RSS (1 s after its last cell, median of 5 samples over 1 s).
 * Then it holds thousands of slow streams open through a fresh bare proxy and a fresh one-worker
 * Tollgate and reports resident memory per stream, and whether it stays flat. The whole run has a
 * deadline.
 *
 * With --baseline PATH, another build (e.g. the commit before a change, built in a worktree) runs
 * as `tollgate-1-baseline`, a one-worker gateway measured in the same interleaved cells as
 * `tollgate-1` (every pass-through concurrency, and the translated scenarios at c16), so that a
 * change is compared with the build before it in one run; the report sets the two side by side.
 * A build that predates a scenario's endpoint (embeddings) is left out of that scenario.
 *
 * Options: --quick (short cells, fewer streams), --gateway PATH (default dist/cli/main.js),
 * --baseline PATH (another build's dist/cli/main.js, see above),
 * --workers N (the "all workers" row, default: the number of CPUs; with --profile, the workers of
 * the profiled gateway, default 1), --workers-list 1,2,4,8 (instead of --workers: a gateway at each
 * count, reported with the machine's CPUs; 1 is tollgate-1, which always runs), --duration MS,
 * --warmup MS, --streams N, --no-streams, --scenarios a,b, --concurrency 1,16,64, --all-cells,
 * --deadline SECONDS (default 600, 300 with --quick, or 1.5× the run's own estimate when that is
 * longer), --no-log-compare, --no-traces, --no-pg, --postgres-url URL, --redis-url URL,
 * --profile (instead: CPU-profile a one-worker gateway under load, at c16 unless --concurrency is
 * given, and list its hottest functions), --help.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setInterval } from 'node:timers';
import { parseArgs } from 'node:util';
import { ask, killAllProcesses, listeningPort, startNode, stopProcess } from './processes.mjs';
import { machineBusyMicros, treeCpuMicros, treeRssBytes } from './proc.mjs';
import { renderMarkdown } from './report.mjs';
import { startTollgate, prepareTollgate } from './tollgate.mjs';
import { summarizeProfiles } from './profile.mjs';
import { checkRedis, createBenchDatabase, dropBenchDatabaseSync, postgresSetup } from './postgres.mjs';

const benchFolder = dirname(fileURLToPath(import.meta.url));
const repository = resolve(benchFolder, '..');

/** A wrong option or value: say which, and stop before anything starts. */
function usageError(message) {
  process.stderr.write(`bench: ${message} (node bench/run.mjs --help lists the options)\n`);
  process.exit(2);
}

const OPTIONS = {
  quick: { type: 'boolean', default: false },
  gateway: { type: 'string', default: join(repository, 'dist/cli/main.js') },
  baseline: { type: 'string' },
  workers: { type: 'string' },
  'workers-list': { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  streams: { type: 'string' },
  'no-streams': { type: 'boolean', default: false },
  'no-traces': { type: 'boolean', default: false },
  'no-pg': { type: 'boolean', default: false },
  'postgres-url': { type: 'string' },
  'redis-url': { type: 'string' },
  scenarios: { type: 'string' },
  concurrency: { type: 'string' },
  'all-cells': { type: 'boolean', default: false },
  deadline: { type: 'string' },
  profile: { type: 'boolean', default: false },
  'no-log-compare': { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
};
let flags;
try {
  ({ values: flags } = parseArgs({ options: OPTIONS }));
} catch (error) {
  usageError(error.message);
}

if (flags.help) {
  const source = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  const header = source.slice(source.indexOf('/**') + 3, source.indexOf('*/'));
  process.stdout.write(`${header.split('\n').map((line) => line.replace(/^ \* ?/, '')).join('\n').trim()}\n`);
  process.exit(0);
}

flags.gateway = resolve(flags.gateway);
if (flags.baseline !== undefined) {
  flags.baseline = resolve(flags.baseline);
  if (!existsSync(flags.baseline)) usageError(`--baseline ${flags.baseline} does not exist (build that commit first)`);
}

/** A whole number from a flag, or a clear error naming the flag. */
function numberFlag(name, fallback) {
  const text = flags[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) usageError(`--${name} takes a whole number, not ${JSON.stringify(text)}`);
  return value;
}

function listFlag(name, fallback) {
  const items = (flags[name] ?? fallback).split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (items.length === 0) usageError(`--${name} takes a comma-separated list`);
  return items;
}

const concurrencies = listFlag('concurrency', '1,16,64').map((text) => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) usageError(`--concurrency takes positive whole numbers, not ${JSON.stringify(text)}`);
  return value;
});

if (flags['workers-list'] !== undefined && flags.workers !== undefined) usageError('give --workers or --workers-list, not both');
if (flags['workers-list'] !== undefined && flags.profile) usageError('--workers-list does not go with --profile (use --workers)');
/** The worker counts of the SQLite gateways: tollgate-1 always, and tollgate-<N> for each N above 1. */
const workerCounts = flags['workers-list'] !== undefined
  ? listFlag('workers-list').map((text) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) usageError(`--workers-list takes whole numbers of at least 1, not ${JSON.stringify(text)}`);
    return value;
  })
  : [1, numberFlag('workers', os.availableParallelism())];
if (workerCounts.includes(0)) usageError('--workers must be at least 1');

const settings = {
  warmupMs: numberFlag('warmup', flags.quick ? 300 : 1_000),
  durationMs: numberFlag('duration', flags.quick ? 1_000 : 4_000),
  concurrencies,
  // The variants of tollgate-1 and the translated scenarios: their targets are at c16.
  focusConcurrencies: flags['all-cells'] || !concurrencies.includes(16) ? concurrencies : [16],
  streamCount: flags['no-streams'] ? 0 : numberFlag('streams', flags.quick ? 1_000 : 5_000),
  workerCounts: [...new Set([1, ...workerCounts])].sort((left, right) => left - right),
  deadlineSeconds: numberFlag('deadline', flags.quick ? 300 : 600),
};
if (settings.durationMs === 0) usageError('--duration must be above 0');

const chatBody = (model, extra = {}) => ({ model, messages: [{ role: 'user', content: 'Say hello.' }], ...extra });

const PASSAGE_WORDS = 'the harbour lights came on one by one as the ferry crossed the fjord and the gulls followed it home'.split(' ');
/** Passage `number`: about 50 words, each passage a different rotation of the same ones. */
const passage = (number) => Array.from({ length: 50 }, (_, index) => PASSAGE_WORDS[(index + number * 7) % PASSAGE_WORDS.length]).join(' ');
/**
 * One embeddings request: four passages of about 50 words, in base64 as openai-node asks unless
 * told otherwise (docs/wire-protocols.md §7.1); the mock answers with 256-dimension vectors.
 */
const embeddingsBody = { model: 'bench-embed', input: [0, 1, 2, 3].map(passage), encoding_format: 'base64' };
/** `translated`: the gateway translates the request for its upstream; measured on tollgate-1 only. */
const SCENARIOS = {
  chat: { path: '/v1/chat/completions', body: chatBody('bench') },
  'chat-stream': { path: '/v1/chat/completions', body: chatBody('bench', { stream: true, stream_options: { include_usage: true } }), expectTail: 'data: [DONE]' },
  responses: { path: '/v1/responses', body: { model: 'bench', input: 'Say hello.' } },
  // The usage comes last in the answer (the mock's, and the gateway's, which rewrites it): its
  // presence in the tail tells a whole answer from a cut one.
  embeddings: { path: '/v1/embeddings', body: embeddingsBody, expectTail: '"total_tokens":' },
  'responses-via-chat': { path: '/v1/responses', body: { model: 'bench-via-chat', input: 'Say hello.' }, translated: true },
  'responses-via-anthropic': { path: '/v1/responses', body: { model: 'bench-via-anthropic', input: 'Say hello.' }, translated: true },
  // The same answer as `responses`, streamed over the Responses WebSocket: one socket per worker,
  // one `response.create` after another (docs/wire-protocols.md §22). Only the gateway serves it.
  'responses-socket': { path: '/v1/responses', body: { model: 'bench', input: 'Say hello.' }, socket: true },
};
const scenarioNames = listFlag('scenarios', Object.keys(SCENARIOS).join(','));
for (const name of scenarioNames) if (!Object.hasOwn(SCENARIOS, name)) usageError(`unknown scenario ${name} (known: ${Object.keys(SCENARIOS).join(', ')})`);

const startedAt = new Date();
const folder = mkdtempSync(join(os.tmpdir(), 'tollgate-bench-'));
const results = {
  startedAt: startedAt.toISOString(),
  machine: describeMachine(),
  settings,
  scenarios: scenarioNames,
  translatedScenarios: scenarioNames.filter((name) => SCENARIOS[name].translated === true),
  targets: [],
  unavailable: {},
  leftOut: {},
  runs: [],
  peakRssBytes: {},
  streams: [],
};

/** The PostgreSQL databases made for the -pg targets, until they are dropped: `{ serverUrl, name }` each. */
const benchDatabases = [];
/** Their names, kept after they are dropped: the load generator counts their backends' CPU as PostgreSQL's. */
const postgresDatabaseNames = [];

/** Drops the run's PostgreSQL databases, if any (synchronous: also called on exit). */
function dropDatabases() {
  for (const { serverUrl, name } of benchDatabases.splice(0)) {
    try {
      dropBenchDatabaseSync(serverUrl, name);
    } catch (error) {
      process.stderr.write(`Could not drop the benchmark database ${name}: ${error.stderr?.toString().trim() || error.message}\n`);
    }
  }
}

let cleanedUp = false;
function cleanUp() {
  if (cleanedUp) return;
  cleanedUp = true;
  killAllProcesses();
  dropDatabases();
  rmSync(folder, { recursive: true, force: true });
}
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping every child process\n`);
    cleanUp();
    process.exit(130);
  });
}
let deadline;
/** (Re)arms the deadline at `settings.deadlineSeconds` from the start of the run. */
function armDeadline() {
  clearTimeout(deadline);
  deadline = setTimeout(() => {
    process.stderr.write(`\nDeadline of ${settings.deadlineSeconds} s reached: writing the partial results and stopping.\n`);
    finish(2);
  }, settings.deadlineSeconds * 1_000 - (Date.now() - startedAt.getTime()));
  deadline.unref();
}
armDeadline();

// ---------------------------------------------------------------------------------------------

/** Sent to the mock and the bare proxy, which do not check it, so that every request is alike. */
const UNUSED_KEY = 'sk-tg-unused-by-the-mock';

const log = (text) => process.stderr.write(`${text}\n`);

/** A port nobody listens on right now (the gateway takes PORT; cluster workers then share it). */
function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

function describeMachine() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const limits = readFileSync('/proc/self/limits', 'utf8');
  const openFiles = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limits);
  return {
    cpus: os.availableParallelism(),
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown',
    memoryBytes: os.totalmem(),
    kernel: os.release(),
    node: process.version,
    openFilesLimit: openFiles ? `${openFiles[1]} (hard ${openFiles[2]})` : 'unknown',
  };
}

/** Samples each live target's resident memory (all its instances together) every 100 ms and keeps the peak. */
const sampled = new Map();
const sampler = setInterval(() => {
  for (const [label, pids] of sampled) {
    const rss = pids.reduce((sum, pid) => sum + treeRssBytes(pid), 0);
    if (rss > (results.peakRssBytes[label] ?? 0)) results.peakRssBytes[label] = rss;
  }
}, 100);
sampler.unref();

async function startScript(script, env) {
  const handle = startNode([join(benchFolder, script)], { env: { ...process.env, ...env } });
  const port = await listeningPort(handle);
  return { handle, port };
}

/**
 * One cell: the load generator (its own process) against the target's `ports` (its instances; the
 * connections spread evenly over them), measuring the CPU of its `pids` together. A target on
 * PostgreSQL + Redis (`services`) has their CPU counted apart from the other processes'.
 */
async function measure(scenarioName, concurrency, { name: target, ports, pids, key, supportPids = [], services = false }, { warmupMs = settings.warmupMs, durationMs = settings.durationMs, record = true } = {}) {
  const scenario = SCENARIOS[scenarioName];
  const job = {
    origins: ports.map((port) => `http://127.0.0.1:${port}`),
    path: scenario.path,
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify(scenario.body),
    expectTail: scenario.expectTail,
    socket: scenario.socket === true,
    concurrency,
    warmupMs,
    durationMs,
    measuredPids: pids,
    supportPids: pids.includes(mockPid) ? [] : [mockPid, ...supportPids],
    postgresDatabases: postgresDatabaseNames,
    services,
  };
  const loader = startNode([join(benchFolder, 'load.mjs')], { ipc: true });
  const answer = await ask(loader, job, warmupMs + durationMs + 30_000);
  await loader.exited;
  if (!answer.ok) throw new Error(`load generator failed: ${answer.error}`);
  const result = answer.result;
  const run = { scenario: scenarioName, concurrency, target, instances: ports.length, services, ...result, cpuPerRequestMicros: result.cpuMicros / result.completed, otherCores: (result.otherCpuMicros + result.stealCpuMicros) / (result.seconds * 1e6), interruptCores: result.interruptCpuMicros / (result.seconds * 1e6) };
  if (record) results.runs.push(run);
  const servicesText = services ? `  postgres ${(run.postgresCpuMicros / (run.seconds * 1e6)).toFixed(2)} redis ${(run.redisCpuMicros / (run.seconds * 1e6)).toFixed(2)} cores` : '';
  const others = run.otherCores >= 0.2 ? ` [${run.otherBusiest.map((busy) => `${busy.cores} ${busy.command.slice(0, 50)}`).join('; ')}]` : '';
  const errors = run.errors > 0 ? `, ${run.errors} errors (${run.errorSamples.join(' / ')})` : '';
  log(`  ${scenarioName.padEnd(23)} c${String(concurrency).padEnd(3)} ${target.padEnd(17)} ${run.rps.toFixed(0).padStart(6)} req/s  p50 ${run.latencyMs.p50.toFixed(2)} ms  p99 ${run.latencyMs.p99.toFixed(2)} ms  ${run.cpuPerRequestMicros.toFixed(0)} µs CPU/req  other ${run.otherCores.toFixed(2)} irq ${run.interruptCores.toFixed(2)} cores${servicesText}${others}${errors}`);
  return run;
}

/** CPUs kept busy by everything else on the machine, over one second before the benchmark starts. */
async function backgroundLoad() {
  const before = machineBusyMicros();
  await new Promise((resolveWait) => setTimeout(resolveWait, 1_000));
  const after = machineBusyMicros();
  return (after.tasks - before.tasks + after.steal - before.steal) / 1e6;
}

/** Median of a few RSS samples of `pid`'s tree taken `intervalMs` apart (over 1 s by default). */
async function settledRss(pid, samples = 5, intervalMs = 200) {
  const values = [];
  for (let index = 0; index < samples; index += 1) {
    await new Promise((resolveWait) => setTimeout(resolveWait, intervalMs));
    values.push(treeRssBytes(pid));
  }
  return values.sort((left, right) => left - right)[Math.floor(values.length / 2)];
}

/** Opens `count` slow streams through the target at once and measures the memory they take. */
async function holdStreams({ name: target, port, pid, key }) {
  log(`  ${target}: warming up, then opening ${settings.streamCount} slow streams`);
  const entry = { target, requested: settings.streamCount };
  results.streams.push(entry);
  await measure('chat-stream', 16, { name: `${target} (warm-up)`, ports: [port], pids: [pid], key }, { warmupMs: 200, durationMs: 1_000, record: false });
  entry.idleRssBytes = await settledRss(pid);

  const holder = startNode([join(benchFolder, 'streams.mjs')], { ipc: true });
  const body = JSON.stringify({ model: 'bench-slow', messages: [{ role: 'user', content: 'Say hello slowly.' }], stream: true, stream_options: { include_usage: true } });
  const job = { origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, body, count: settings.streamCount, batch: 200, openTimeoutMs: 60_000 };
  const opened = await ask(holder, job, 90_000);
  if (opened.type !== 'opened') throw new Error(`stream holder failed: ${opened.error}`);
  entry.opened = opened.opened;
  entry.openSeconds = opened.seconds;
  entry.openProgressSeconds = opened.progress;
  if (opened.failed > 0) entry.note = `${opened.failed} failed: ${opened.errorSamples.join(' / ')}`;
  // Measured while every stream is open and receiving one chunk per second: memory, and the CPU
  // that keeping them flowing costs.
  const cpuBefore = treeCpuMicros(pid);
  const heldFrom = process.hrtime.bigint();
  entry.openRssBytes = await settledRss(pid);
  if (entry.opened > 0) entry.perStreamBytes = (entry.openRssBytes - entry.idleRssBytes) / entry.opened;
  await new Promise((resolveWait) => setTimeout(resolveWait, 3_000));
  entry.laterRssBytes = await settledRss(pid);
  entry.heldCores = (treeCpuMicros(pid) - cpuBefore) / (Number(process.hrtime.bigint() - heldFrom) / 1e3);
  log(`  ${target}: ${entry.opened} open in ${entry.openSeconds.toFixed(1)} s (tenths at ${entry.openProgressSeconds.join(', ')} s), RSS ${(entry.idleRssBytes / 1_048_576).toFixed(1)} → ${(entry.openRssBytes / 1_048_576).toFixed(1)} MB (${(entry.laterRssBytes / 1_048_576).toFixed(1)} MB 4 s later), ${((entry.perStreamBytes ?? NaN) / 1024).toFixed(1)} KB per stream, ${entry.heldCores.toFixed(2)} CPUs busy while holding them`);
  await ask(holder, 'close', 30_000).catch((error) => log(`  closing the streams: ${error.message}`));
  await stopProcess(holder);
}

function finish(exitCode) {
  clearTimeout(deadline);
  if (flags.profile) {
    cleanUp();
    process.exit(exitCode);
  }
  results.totalSeconds = (Date.now() - startedAt.getTime()) / 1_000;
  const markdown = renderMarkdown(results);
  const resultsFolder = join(benchFolder, 'results');
  mkdirSync(resultsFolder, { recursive: true });
  writeFileSync(join(resultsFolder, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(resultsFolder, 'latest.md'), markdown);
  process.stdout.write(`\n${markdown}\nSaved bench/results/latest.json and bench/results/latest.md\n`);
  cleanUp();
  process.exit(exitCode);
}

// ---------------------------------------------------------------------------------------------

let mockPid = 0;

const redactUrl = (url) => url.replace(/\/\/[^@/]*@/, '//***@');

/**
 * The concurrencies at which `target` runs `scenario`: translated scenarios on tollgate-1 alone,
 * and tollgate-1's variants, at the focus concurrencies (c16); everything else at every one.
 */
const BASELINE = 'tollgate-1-baseline';

function cellsOf(target, scenario) {
  if (target.skipScenarios?.includes(scenario) === true) return [];
  if (SCENARIOS[scenario].translated === true || SCENARIOS[scenario].socket === true) return target.name === 'tollgate-1' || target.name === BASELINE ? settings.focusConcurrencies : [];
  if (target.variant === true) return settings.focusConcurrencies;
  // Instances behind one target need a connection each at least: tollgate-3x-pg is not run at c1.
  return settings.concurrencies.filter((concurrency) => concurrency >= target.ports.length);
}

const sleep = (ms) => new Promise((resolveWait) => setTimeout(resolveWait, ms));

async function main() {
  if (!existsSync(flags.gateway)) throw new Error(`${flags.gateway} does not exist: run \`npm run build\` first (or pass --gateway)`);
  results.machine.backgroundCores = await backgroundLoad();
  if (results.machine.backgroundCores > 0.2) log(`WARNING: other processes keep ${results.machine.backgroundCores.toFixed(2)} CPUs busy; the figures will be disturbed`);
  log(`Benchmark folder ${folder}; ${settings.warmupMs} ms warm-up + ${settings.durationMs} ms per cell; deadline ${settings.deadlineSeconds} s`);

  const mock = await startScript('mock-upstream.mjs', { PORT: '0' });
  mockPid = mock.handle.pid;
  log(`mock upstream on ${mock.port} (pid ${mock.handle.pid})`);
  // Each gateway target gets its own database: instances sharing one would (rightly) refuse to
  // start without a shared limit store (the instances of tollgate-3x-pg share theirs and Redis).
  const prepare = (name, options = {}) => {
    const instanceFolder = join(folder, name);
    mkdirSync(instanceFolder);
    // A build from before the embeddings endpoint refuses a catalog naming it: its catalog leaves that model out.
    const gatewayPath = options.gatewayPath ?? flags.gateway;
    return prepareTollgate({ folder: instanceFolder, mockPort: mock.port, ...options, gatewayPath, embeddings: servesEmbeddings(gatewayPath) });
  };

  if (flags.profile) return profile(mock, prepare('tollgate-profiled'));

  const bare = await startScript('bare-proxy.mjs', { PORT: '0', UPSTREAM: `http://127.0.0.1:${mock.port}` });
  const targets = [
    { name: 'direct', ports: [mock.port], pids: [mock.handle.pid], key: UNUSED_KEY },
    { name: 'bare-proxy', ports: [bare.port], pids: [bare.handle.pid], key: UNUSED_KEY },
  ];
  const tollgates = [];
  const supportHandles = [];

  /**
   * Prepares one gateway target and starts its `instances` (`serve --workers <workers>` each, on
   * one database); a failure makes it "not available" (with the reason), not the run's end.
   */
  const addTollgate = async (name, { workers = 1, instances = 1, variant = false, services = false, prepareOptions = {}, env = {}, supportPids = [], gatewayPath = flags.gateway } = {}) => {
    // A build from before the embeddings endpoint sits out that scenario (see `prepare`).
    const skipScenarios = [...(servesEmbeddings(gatewayPath) ? [] : ['embeddings']), ...(servesSocket(gatewayPath) ? [] : ['responses-socket'])];
    let prepared;
    try {
      prepared = prepare(name, { ...prepareOptions, gatewayPath });
    } catch (error) {
      const reason = `setting it up failed: ${String(error.stderr ?? error.message).trim().split('\n').slice(-2).join(' | ').slice(0, 300)}`;
      results.unavailable[name] = reason;
      log(`${name}: not available (${reason})`);
      return;
    }
    const handles = [];
    const ports = [];
    // One after another: the first applies the migrations and writes the catalog's first version.
    for (let instance = 0; instance < instances; instance += 1) {
      const port = await freePort();
      const started = await startTollgate({ gatewayPath, env: { ...prepared.env, ...env }, port, workers });
      if (started.unavailable !== undefined) {
        const reason = instances > 1 ? `instance ${instance + 1} of ${instances}: ${started.unavailable}` : started.unavailable;
        results.unavailable[name] = reason;
        log(`${name}: not available (${reason})`);
        for (const handle of [...handles, started.handle]) if (handle !== undefined) await stopProcess(handle);
        return;
      }
      handles.push(started.handle);
      ports.push(port);
    }
    // Give the other workers of a cluster time to come up behind the first healthy one.
    if (workers > 1) await sleep(Math.max(1_500, 500 * workers));
    tollgates.push(...handles);
    targets.push({ name, ports, pids: handles.map((handle) => handle.pid), key: prepared.key, supportPids, variant, services, skipScenarios });
  };

  await addTollgate('tollgate-1');
  // The build before a change, beside tollgate-1 in the same cells.
  if (flags.baseline !== undefined) await addTollgate(BASELINE, { gatewayPath: flags.baseline });
  // The request log's cost: the same one-worker gateway with the log off, measured in the same cells.
  if (flags['no-log-compare']) results.leftOut['tollgate-1-nolog'] = '--no-log-compare';
  else await addTollgate('tollgate-1-nolog', { variant: true, prepareOptions: { log: false } });
  const manyWorkers = settings.workerCounts.filter((count) => count > 1);
  for (const workers of manyWorkers) await addTollgate(`tollgate-${workers}`, { workers });
  if (manyWorkers.length === 0) results.leftOut['tollgate-N'] = '--workers 1';

  // The same one-worker gateway with tracing on: every request exported as spans to a sink.
  if (flags['no-traces']) results.leftOut['tollgate-1-traced'] = '--no-traces';
  else {
    const sink = await startScript('otlp-sink.mjs', { PORT: '0' });
    supportHandles.push(sink.handle);
    const env = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' };
    await addTollgate('tollgate-1-traced', { variant: true, env, supportPids: [sink.handle.pid] });
  }

  // One instance, then three, on PostgreSQL + Redis, each on a database made for this run.
  if (flags['no-pg']) for (const { name } of POSTGRES_TARGETS) results.leftOut[name] = '--no-pg';
  else await addPostgresTollgates(addTollgate);

  results.targets = targets.map((target) => target.name);
  for (const target of targets) if (target.name !== 'direct') sampled.set(target.name, target.pids);
  log(`targets: ${targets.map((target) => `${target.name} :${target.ports.join(',')}`).join(', ')}`);

  const cells = scenarioNames.flatMap((scenario) => targets.flatMap((target) => cellsOf(target, scenario)));
  const warmups = scenarioNames.flatMap((scenario) => targets.filter((target) => cellsOf(target, scenario).length > 0));
  const warmupMs = flags.quick ? 500 : 1_000;
  const streamSeconds = settings.streamCount > 0 ? 2 * (15 + settings.streamCount / 400) : 0;
  const estimateSeconds = Math.round((cells.length * (settings.warmupMs + settings.durationMs + 300) + warmups.reduce((sum, target) => sum + warmupMs * target.ports.length + 300, 0)) / 1_000 + streamSeconds + 5);
  log(`${cells.length} cells; expect about ${estimateSeconds} s from here`);
  // A run with more cells than the default deadline allows (e.g. --workers-list) gets 1.5× its estimate.
  const elapsedSeconds = (Date.now() - startedAt.getTime()) / 1_000;
  if (flags.deadline === undefined && elapsedSeconds + 1.5 * estimateSeconds > settings.deadlineSeconds) {
    settings.deadlineSeconds = Math.ceil(elapsedSeconds + 1.5 * estimateSeconds);
    armDeadline();
    log(`deadline moved to ${settings.deadlineSeconds} s (1.5× the estimate)`);
  }

  // Unrecorded warm-up of every process and code path (JIT, pools, the database). A target of
  // several instances is warmed for as long times as it has instances, so that each instance has
  // served about as many requests as a single one when its cells are measured (each gets a share).
  log(`warming up every target (${warmupMs} ms per scenario and instance)`);
  for (const scenario of scenarioNames) {
    for (const target of targets) {
      if (cellsOf(target, scenario).length > 0) await measure(scenario, 16, { ...target, name: `${target.name} (warm-up)` }, { warmupMs: 0, durationMs: warmupMs * target.ports.length, record: false });
    }
  }

  // Cells are interleaved (every target for one cell, then the next cell) so drift hits all alike.
  for (const scenario of scenarioNames) {
    for (const concurrency of settings.concurrencies) {
      for (const target of targets) if (cellsOf(target, scenario).includes(concurrency)) await measure(scenario, concurrency, target);
    }
  }
  sampled.clear();
  // The one-worker gateway at rest after every cell it ran: its idle RSS.
  const one = targets.find((target) => target.name === 'tollgate-1');
  if (one !== undefined && results.runs.some((run) => run.target === 'tollgate-1')) {
    await sleep(1_000);
    results.idleRss = { target: 'tollgate-1', bytes: await settledRss(one.pids[0]) };
    log(`  tollgate-1 idle after its cells: ${(results.idleRss.bytes / 1_048_576).toFixed(1)} MB RSS`);
  }
  for (const handle of tollgates) await stopProcess(handle);
  for (const handle of supportHandles) await stopProcess(handle);
  dropDatabases();

  await stopProcess(bare.handle);

  // Fresh processes for the streams, so that both start from the same idle state.
  if (settings.streamCount > 0) {
    const freshBare = await startScript('bare-proxy.mjs', { PORT: '0', UPSTREAM: `http://127.0.0.1:${mock.port}` });
    await holdStreams({ name: 'bare-proxy', port: freshBare.port, pid: freshBare.handle.pid, key: UNUSED_KEY });
    await stopProcess(freshBare.handle);
    const port = await freePort();
    const prepared = prepare('tollgate-streams');
    const fresh = await startTollgate({ gatewayPath: flags.gateway, env: prepared.env, port, workers: 1 });
    if (fresh.unavailable !== undefined) {
      results.streams.push({ target: 'tollgate-1', requested: settings.streamCount, note: fresh.unavailable });
    } else {
      await holdStreams({ name: 'tollgate-1', port, pid: fresh.handle.pid, key: prepared.key });
      await stopProcess(fresh.handle);
    }
  }
  await stopProcess(mock.handle);
  finish(0);
}

/** Whether the build serves the Responses WebSocket (older builds answer the upgrade with 404). */
function servesSocket(gatewayPath) {
  return existsSync(join(dirname(dirname(gatewayPath)), 'http', 'v1', 'surfaces', 'responses', 'socket'));
}

/** Whether a build knows the embeddings endpoint (its catalog schema names it). */
function servesEmbeddings(gatewayPath) {
  const schema = join(dirname(dirname(gatewayPath)), 'config', 'schema.js');
  return existsSync(schema) && readFileSync(schema, 'utf8').includes("'embeddings'");
}

/** The targets on PostgreSQL + Redis: one instance, and three on one database (issue 22). */
const POSTGRES_TARGETS = [{ name: 'tollgate-1-pg', instances: 1 }, { name: 'tollgate-3x-pg', instances: 3 }];

/**
 * tollgate-1-pg and tollgate-3x-pg, each on a fresh PostgreSQL database (created here, dropped when
 * the run ends) with Redis for limits; "not available", with the reason, when the URLs are not
 * given or either server does not answer.
 */
async function addPostgresTollgates(addTollgate) {
  const unavailable = (name, reason) => {
    results.unavailable[name] = reason;
    log(`${name}: not available (${reason})`);
  };
  const setup = postgresSetup(flags);
  let problem = setup.missing;
  if (problem === undefined) {
    try {
      await checkRedis(setup.redisUrl);
    } catch (error) {
      problem = `Redis at ${redactUrl(setup.redisUrl)} does not answer: ${error.message}`;
    }
  }
  for (const { name, instances } of POSTGRES_TARGETS) {
    if (problem !== undefined) {
      unavailable(name, problem);
      continue;
    }
    let database;
    try {
      database = await createBenchDatabase(setup.postgresUrl);
    } catch (error) {
      unavailable(name, `could not create a database on ${redactUrl(setup.postgresUrl)}: ${error.message}`);
      continue;
    }
    benchDatabases.push({ serverUrl: setup.postgresUrl, name: database.name });
    postgresDatabaseNames.push(database.name);
    log(`${name}: database ${database.name} on ${redactUrl(setup.postgresUrl)}, Redis at ${redactUrl(setup.redisUrl)}`);
    await addTollgate(name, { instances, services: true, prepareOptions: { databaseUrl: database.url, redisUrl: setup.redisUrl } });
  }
}

/** --profile: one-worker gateway with --cpu-prof under load, then its hottest functions. */
async function profile(mock, prepared) {
  const profileFolder = join(folder, 'profiles');
  mkdirSync(profileFolder);
  const port = await freePort();
  const workers = flags.workers === undefined ? 1 : Number(flags.workers);
  const name = `tollgate-${workers} (profiled)`;
  const started = await startTollgate({ gatewayPath: flags.gateway, env: prepared.env, port, workers, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileFolder}`] });
  if (started.unavailable !== undefined) throw new Error(`gateway did not start: ${started.unavailable}`);
  if (workers > 1) await sleep(Math.max(1_500, 500 * workers));
  results.targets = [name];
  const concurrencies = flags.concurrency === undefined ? [16] : settings.concurrencies;
  for (const scenario of scenarioNames) {
    for (const concurrency of concurrencies) await measure(scenario, concurrency, { name, ports: [port], pids: [started.handle.pid], key: prepared.key });
  }
  await stopProcess(started.handle, 10_000);
  await stopProcess(mock.handle);
  const summary = summarizeProfiles(profileFolder);
  const resultsFolder = join(benchFolder, 'results');
  mkdirSync(resultsFolder, { recursive: true });
  writeFileSync(join(resultsFolder, 'profile.md'), summary);
  process.stdout.write(`\n${summary}\nSaved bench/results/profile.md\n`);
  clearTimeout(deadline);
  cleanUp();
  process.exit(0);
}

main().catch((error) => {
  log(`\nBenchmark failed: ${error?.stack ?? error}`);
  finish(1);
});
