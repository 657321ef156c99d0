/**
 * The load generator, run as a child process (forked by run.mjs) so that its own CPU is not the
 * measured process's. Closed loop: `concurrency` workers each send requests back to back over an
 * undici Pool with one connection per worker, for a warm-up and then a measured window. Latency is
 * from sending the request to reading the last byte of the answer.
 *
 * With `socket`, each worker opens one Responses WebSocket instead (`GET <path>` upgraded) and sends
 * `response.create` after `response.create` on it; latency is from sending one to reading its
 * `response.completed`.
 *
 * Message in:  { origin, path, headers, body, expectTail, socket, concurrency, warmupMs, durationMs, measuredPid, supportPids }
 * Message out: { completed, errors, errorSamples, seconds, rps, latencyMs: {p50,p90,p99,max,mean}, cpuMicros,
 *                loadCpuMicros, supportCpuMicros, otherCpuMicros, interruptCpuMicros, stealCpuMicros }
 * `supportPids` are the other processes of the setup (the mock behind a proxy); `otherCpuMicros` is
 * what other processes used in the window (the interrupt and steal times are apart): anything
 * large means the figures were disturbed.
 */
import { Buffer } from 'node:buffer';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { allProcessTicks, busiestBetween, machineBusyMicros, processTree, treeCpuMicros } from './proc.mjs';

const EMPTY = Buffer.alloc(0);
const tail = (previous, last) => Buffer.concat([previous, last]).toString('utf8').slice(-300);

process.once('message', (job) => {
  run(job).then(
    (result) => process.send({ ok: true, result }, () => process.exit(0)),
    (error) => process.send({ ok: false, error: String(error?.stack ?? error) }, () => process.exit(1)),
  );
});
process.on('disconnect', () => process.exit(1));

async function run(job) {
  const pool = new Pool(job.origin, { connections: job.concurrency, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 15_000, bodyTimeout: 15_000 });
  const headers = { 'content-type': 'application/json', ...job.headers };
  const latencies = [];
  const errorSamples = [];
  let errors = 0;
  let measuring = false;
  let running = true;
  let windowStart = 0n;
  let windowEnd = 0n;
  let cpuStart = 0;
  let cpuEnd = 0;
  let supportStart = 0;
  let supportEnd = 0;
  let processesStart;
  let processesEnd;
  let machineStart;
  let machineEnd;
  const supportCpu = () => (job.supportPids ?? []).reduce((sum, pid) => sum + treeCpuMicros(pid), 0);
  let loadCpuStart;
  let loadCpu;

  const noteError = (text) => {
    if (measuring) errors += 1;
    if (errorSamples.length < 5) errorSamples.push(text.slice(0, 300));
  };

  const once = async () => {
    const started = process.hrtime.bigint();
    try {
      const response = await pool.request({ path: job.path, method: 'POST', headers, body: job.body });
      // Only the end is checked: the last two chunks hold the tail even when it was split.
      let previous = EMPTY;
      let last = EMPTY;
      for await (const chunk of response.body) {
        previous = last;
        last = chunk;
      }
      if (response.statusCode !== 200) return noteError(`HTTP ${response.statusCode}: ${tail(previous, last)}`);
      if (job.expectTail !== undefined && !tail(previous, last).includes(job.expectTail)) return noteError(`unexpected end: ${tail(previous, last)}`);
    } catch (error) {
      return noteError(String(error?.code ?? error?.message ?? error));
    }
    if (measuring) latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
  };

  const worker = async () => {
    if (job.socket) return socketWorker();
    while (running) await once();
  };

  /** One socket, one turn after another; a socket that fails is opened again. */
  const socketWorker = async () => {
    const create = JSON.stringify({ type: 'response.create', ...JSON.parse(job.body) });
    while (running) {
      const socket = new WebSocket(`${job.origin.replace(/^http/, 'ws')}${job.path}`, { headers: job.headers, perMessageDeflate: false });
      try {
        await new Promise((resolve, reject) => {
          socket.once('open', resolve);
          socket.once('error', reject);
        });
        while (running) {
          const started = process.hrtime.bigint();
          const ended = await new Promise((resolve) => {
            const onMessage = (data) => {
              const text = data.toString();
              if (text.includes('"type":"response.completed"')) finish(undefined);
              else if (text.startsWith('{"type":"error"') || text.includes('"type":"response.failed"')) finish(text);
            };
            const onClose = () => finish('socket closed');
            const finish = (error) => {
              socket.off('message', onMessage);
              socket.off('close', onClose);
              resolve(error);
            };
            socket.on('message', onMessage);
            socket.once('close', onClose);
            socket.send(create);
          });
          if (ended !== undefined) {
            noteError(ended);
            break;
          }
          if (measuring) latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
        }
      } catch (error) {
        noteError(String(error?.code ?? error?.message ?? error));
      } finally {
        socket.terminate();
      }
    }
  };

  setTimeout(() => {
    processesStart = allProcessTicks();
    machineStart = machineBusyMicros();
    cpuStart = treeCpuMicros(job.measuredPid);
    supportStart = supportCpu();
    loadCpuStart = process.cpuUsage();
    windowStart = process.hrtime.bigint();
    measuring = true;
  }, job.warmupMs);
  const done = new Promise((resolve) =>
    setTimeout(() => {
      measuring = false;
      windowEnd = process.hrtime.bigint();
      loadCpu = process.cpuUsage(loadCpuStart);
      cpuEnd = treeCpuMicros(job.measuredPid);
      supportEnd = supportCpu();
      machineEnd = machineBusyMicros();
      processesEnd = allProcessTicks();
      running = false;
      resolve();
    }, job.warmupMs + job.durationMs),
  );
  const workers = Array.from({ length: job.concurrency }, worker);
  await done;
  await Promise.race([Promise.all(workers), new Promise((resolve) => setTimeout(resolve, 5_000))]);
  await pool.destroy();

  const seconds = Number(windowEnd - windowStart) / 1e9;
  const ours = new Set([process.pid, process.ppid, ...[job.measuredPid, ...(job.supportPids ?? [])].flatMap(processTree)]);
  const sorted = Float64Array.from(latencies).sort();
  const quantile = (q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
  const completed = sorted.length;
  return {
    completed,
    errors,
    errorSamples,
    seconds,
    rps: completed / seconds,
    latencyMs: {
      p50: quantile(0.5),
      p90: quantile(0.9),
      p99: quantile(0.99),
      max: sorted.length === 0 ? NaN : sorted[sorted.length - 1],
      mean: completed === 0 ? NaN : latencies.reduce((sum, value) => sum + value, 0) / completed,
    },
    cpuMicros: cpuEnd - cpuStart,
    loadCpuMicros: loadCpu.user + loadCpu.system,
    supportCpuMicros: supportEnd - supportStart,
    otherCpuMicros: Math.max(0, machineEnd.tasks - machineStart.tasks - (cpuEnd - cpuStart) - (supportEnd - supportStart) - (loadCpu.user + loadCpu.system)),
    interruptCpuMicros: machineEnd.interrupts - machineStart.interrupts,
    stealCpuMicros: machineEnd.steal - machineStart.steal,
    otherBusiest: busiestBetween(processesStart, processesEnd, seconds, ours),
  };
}
