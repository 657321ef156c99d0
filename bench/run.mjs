/**
 * `npm run bench`: measures the built gateway against a mock upstream on loopback.
 *
 * For chat, streamed chat and responses, at each concurrency, it measures straight to the mock
 * ("direct"), through a bare Node pass-through proxy (the yardstick), through Tollgate with one
 * worker and with all workers; then it holds thousands of slow streams open through the bare proxy
 * and through a fresh one-worker Tollgate and reports resident memory per stream. Everything runs
 * in child processes that are killed on exit; the whole run has a deadline.
 *
 * One more Tollgate, `tollgate-1-traced`, is the one-worker gateway with OpenTelemetry tracing on
 * (OTLP/HTTP protobuf to a sink that discards, bench/otlp-sink.mjs): its rows beside `tollgate-1`
 * (tracing off, the default) show what tracing costs when on; `--no-traces` leaves it out.
 *
 * Options: --quick (short cells, fewer streams), --gateway PATH (default dist/cli/main.js),
 * --workers N (the "all workers" row, default: the number of CPUs; with --profile, the workers of
 * the profiled gateway, default 1), --duration MS, --warmup MS,
 * --streams N, --no-streams, --no-traces, --scenarios a,b, --concurrency 1,16,64, --deadline SECONDS,
 * --no-log-compare (leave out `tollgate-1-nolog`, the one-worker gateway with the request log off
 * that is measured beside `tollgate-1` to show what the log costs),
 * --profile (instead: CPU-profile a one-worker gateway under load, at c16 unless --concurrency is
 * given, and list its hottest functions).
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

const benchFolder = dirname(fileURLToPath(import.meta.url));
const repository = resolve(benchFolder, '..');

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    gateway: { type: 'string', default: join(repository, 'dist/cli/main.js') },
    workers: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    streams: { type: 'string' },
    'no-streams': { type: 'boolean', default: false },
    'no-traces': { type: 'boolean', default: false },
    scenarios: { type: 'string' },
    concurrency: { type: 'string' },
    deadline: { type: 'string' },
    profile: { type: 'boolean', default: false },
    'no-log-compare': { type: 'boolean', default: false },
  },
});

flags.gateway = resolve(flags.gateway);

const settings = {
  warmupMs: Number(flags.warmup ?? (flags.quick ? 300 : 1_000)),
  durationMs: Number(flags.duration ?? (flags.quick ? 1_000 : 4_000)),
  concurrencies: (flags.concurrency ?? '1,16,64').split(',').map(Number),
  streamCount: flags['no-streams'] ? 0 : Number(flags.streams ?? (flags.quick ? 1_000 : 5_000)),
  allWorkers: Number(flags.workers ?? os.availableParallelism()),
  deadlineSeconds: Number(flags.deadline ?? (flags.quick ? 150 : 420)),
};

const SCENARIOS = {
  chat: { path: '/v1/chat/completions', body: { model: 'bench', messages: [{ role: 'user', content: 'Say hello.' }] } },
  'chat-stream': {
    path: '/v1/chat/completions',
    body: { model: 'bench', messages: [{ role: 'user', content: 'Say hello.' }], stream: true, stream_options: { include_usage: true } },
    expectTail: 'data: [DONE]',
  },
  responses: { path: '/v1/responses', body: { model: 'bench', input: 'Say hello.' } },
};
const scenarioNames = (flags.scenarios ?? Object.keys(SCENARIOS).join(',')).split(',');
for (const name of scenarioNames) if (SCENARIOS[name] === undefined) throw new Error(`unknown scenario ${name}`);

const startedAt = new Date();
const folder = mkdtempSync(join(os.tmpdir(), 'tollgate-bench-'));
const results = {
  startedAt: startedAt.toISOString(),
  machine: describeMachine(),
  settings,
  scenarios: scenarioNames,
  targets: [],
  unavailable: {},
  runs: [],
  peakRssBytes: {},
  streams: [],
};

let cleanedUp = false;
function cleanUp() {
  if (cleanedUp) return;
  cleanedUp = true;
  killAllProcesses();
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
const deadline = setTimeout(() => {
  process.stderr.write(`\nDeadline of ${settings.deadlineSeconds} s reached: writing the partial results and stopping.\n`);
  finish(2);
}, settings.deadlineSeconds * 1_000);
deadline.unref();

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

/** Samples each live target's resident memory every 100 ms and keeps the peak. */
const sampled = new Map();
const sampler = setInterval(() => {
  for (const [label, pid] of sampled) {
    const rss = treeRssBytes(pid);
    if (rss > (results.peakRssBytes[label] ?? 0)) results.peakRssBytes[label] = rss;
  }
}, 100);
sampler.unref();

async function startScript(script, env) {
  const handle = startNode([join(benchFolder, script)], { env: { ...process.env, ...env } });
  const port = await listeningPort(handle);
  return { handle, port };
}

/** One cell: the load generator (its own process) against `port`, measuring `pid`'s CPU. */
async function measure(scenarioName, concurrency, { name: target, port, pid, key, supportPids = [] }, { warmupMs = settings.warmupMs, durationMs = settings.durationMs, record = true } = {}) {
  const scenario = SCENARIOS[scenarioName];
  const job = {
    origin: `http://127.0.0.1:${port}`,
    path: scenario.path,
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify(scenario.body),
    expectTail: scenario.expectTail,
    concurrency,
    warmupMs,
    durationMs,
    measuredPid: pid,
    supportPids: pid === mockPid ? [] : [mockPid, ...supportPids],
  };
  const loader = startNode([join(benchFolder, 'load.mjs')], { ipc: true });
  const answer = await ask(loader, job, warmupMs + durationMs + 30_000);
  await loader.exited;
  if (!answer.ok) throw new Error(`load generator failed: ${answer.error}`);
  const result = answer.result;
  const run = { scenario: scenarioName, concurrency, target, ...result, cpuPerRequestMicros: result.cpuMicros / result.completed, otherCores: (result.otherCpuMicros + result.stealCpuMicros) / (result.seconds * 1e6), interruptCores: result.interruptCpuMicros / (result.seconds * 1e6) };
  if (record) results.runs.push(run);
  const others = run.otherCores >= 0.2 ? ` [${run.otherBusiest.map((busy) => `${busy.cores} ${busy.command.slice(0, 50)}`).join('; ')}]` : '';
  const errors = run.errors > 0 ? `, ${run.errors} errors (${run.errorSamples.join(' / ')})` : '';
  log(`  ${scenarioName.padEnd(11)} c${String(concurrency).padEnd(3)} ${target.padEnd(12)} ${run.rps.toFixed(0).padStart(6)} req/s  p50 ${run.latencyMs.p50.toFixed(2)} ms  p99 ${run.latencyMs.p99.toFixed(2)} ms  ${run.cpuPerRequestMicros.toFixed(0)} µs CPU/req  other ${run.otherCores.toFixed(2)} irq ${run.interruptCores.toFixed(2)} cores${others}${errors}`);
  return run;
}

/** CPUs kept busy by everything else on the machine, over one second before the benchmark starts. */
async function backgroundLoad() {
  const before = machineBusyMicros();
  await new Promise((resolveWait) => setTimeout(resolveWait, 1_000));
  const after = machineBusyMicros();
  return (after.tasks - before.tasks + after.steal - before.steal) / 1e6;
}

/** Median of a few RSS samples taken `intervalMs` apart. */
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
  await measure('chat-stream', 16, { name: `${target} (warm-up)`, port, pid, key }, { warmupMs: 200, durationMs: 1_000, record: false });
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

async function main() {
  if (!existsSync(flags.gateway)) throw new Error(`${flags.gateway} does not exist: run \`npm run build\` first (or pass --gateway)`);
  results.machine.backgroundCores = await backgroundLoad();
  if (results.machine.backgroundCores > 0.2) log(`WARNING: other processes keep ${results.machine.backgroundCores.toFixed(2)} CPUs busy; the figures will be disturbed`);
  log(`Benchmark folder ${folder}; ${settings.warmupMs} ms warm-up + ${settings.durationMs} ms per cell; deadline ${settings.deadlineSeconds} s`);

  const mock = await startScript('mock-upstream.mjs', { PORT: '0' });
  mockPid = mock.handle.pid;
  log(`mock upstream on ${mock.port} (pid ${mock.handle.pid})`);
  // Each gateway instance gets its own database: instances sharing one would (rightly) refuse to
  // start without a shared limit store.
  const prepare = (name, { log = true } = {}) => {
    const instanceFolder = join(folder, name);
    mkdirSync(instanceFolder);
    return prepareTollgate({ gatewayPath: flags.gateway, folder: instanceFolder, mockPort: mock.port, log });
  };

  if (flags.profile) return profile(mock, prepare('tollgate-profiled'));

  const bare = await startScript('bare-proxy.mjs', { PORT: '0', UPSTREAM: `http://127.0.0.1:${mock.port}` });
  const targets = [
    { name: 'direct', port: mock.port, pid: mock.handle.pid, key: UNUSED_KEY },
    { name: 'bare-proxy', port: bare.port, pid: bare.handle.pid, key: UNUSED_KEY },
  ];
  const tollgates = [];
  const supportHandles = [];
  // The request log's cost: the same one-worker gateway with the log off, measured in the same cells.
  const variants = [...new Set([1, settings.allWorkers])].map((workers) => ({ name: `tollgate-${workers}`, workers, log: true }));
  if (!flags['no-log-compare']) variants.splice(1, 0, { name: 'tollgate-1-nolog', workers: 1, log: false });
  for (const { name, workers, log: logOn } of variants) {
    const port = await freePort();
    const prepared = prepare(name, { log: logOn });
    const started = await startTollgate({ gatewayPath: flags.gateway, env: prepared.env, port, workers });
    if (started.unavailable !== undefined) {
      results.unavailable[name] = started.unavailable;
      log(`${name}: not available (${started.unavailable})`);
      if (started.handle !== undefined) await stopProcess(started.handle);
      continue;
    }
    // Give the other workers of a cluster time to come up behind the first healthy one.
    if (workers > 1) await new Promise((resolveWait) => setTimeout(resolveWait, 1_500));
    tollgates.push(started.handle);
    targets.push({ name, port, pid: started.handle.pid, key: prepared.key });
  }
  // The same one-worker gateway with tracing on: every request exported as spans to a sink.
  if (!flags['no-traces']) {
    const sink = await startScript('otlp-sink.mjs', { PORT: '0' });
    supportHandles.push(sink.handle);
    const name = 'tollgate-1-traced';
    const port = await freePort();
    const prepared = prepare(name);
    const env = { ...prepared.env, OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' };
    const started = await startTollgate({ gatewayPath: flags.gateway, env, port, workers: 1 });
    if (started.unavailable !== undefined) {
      results.unavailable[name] = started.unavailable;
      log(`${name}: not available (${started.unavailable})`);
      if (started.handle !== undefined) await stopProcess(started.handle);
    } else {
      tollgates.push(started.handle);
      targets.push({ name, port, pid: started.handle.pid, key: prepared.key, supportPids: [sink.handle.pid] });
    }
  }
  results.targets = targets.map((target) => target.name);
  for (const target of targets) if (target.name !== 'direct') sampled.set(target.name, target.pid);
  log(`targets: ${targets.map((target) => `${target.name} :${target.port}`).join(', ')}`);

  // Unrecorded warm-up of every process and code path (JIT, pools, the database file).
  const warmupMs = flags.quick ? 500 : 1_000;
  log(`warming up every target (${warmupMs} ms per scenario)`);
  for (const scenario of scenarioNames) {
    for (const target of targets) await measure(scenario, 16, { ...target, name: `${target.name} (warm-up)` }, { warmupMs: 0, durationMs: warmupMs, record: false });
  }

  // Cells are interleaved (every target for one cell, then the next cell) so drift hits all alike.
  for (const scenario of scenarioNames) {
    for (const concurrency of settings.concurrencies) {
      for (const target of targets) await measure(scenario, concurrency, target);
    }
  }
  sampled.clear();
  for (const handle of tollgates) await stopProcess(handle);
  for (const handle of supportHandles) await stopProcess(handle);

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

/** --profile: one-worker gateway with --cpu-prof under load, then its hottest functions. */
async function profile(mock, prepared) {
  const profileFolder = join(folder, 'profiles');
  mkdirSync(profileFolder);
  const port = await freePort();
  const workers = flags.workers === undefined ? 1 : Number(flags.workers);
  const name = `tollgate-${workers} (profiled)`;
  const started = await startTollgate({ gatewayPath: flags.gateway, env: prepared.env, port, workers, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileFolder}`] });
  if (started.unavailable !== undefined) throw new Error(`gateway did not start: ${started.unavailable}`);
  if (workers > 1) await new Promise((resolveWait) => setTimeout(resolveWait, 1_500));
  results.targets = [name];
  const concurrencies = flags.concurrency === undefined ? [16] : settings.concurrencies;
  for (const scenario of scenarioNames) {
    for (const concurrency of concurrencies) await measure(scenario, concurrency, { name, port, pid: started.handle.pid, key: prepared.key });
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
