/**
 * The load generator, run as a child process (forked by run.mjs) so that its own CPU is not the
 * measured process's. Closed loop: `concurrency` workers each send requests back to back over an
 * undici Pool with one connection per worker, for a warm-up and then a measured window. Latency is
 * from sending the request to reading the last byte of the answer. With several `origins` (the
 * instances of one target), worker i sends to origin i mod their number, so the load is spread
 * evenly (each origin its own Pool).
 *
 * With `socket`, each worker opens one Responses WebSocket instead (`GET <path>` upgraded) and sends
 * `response.create` after `response.create` on it; latency is from sending one to reading its
 * `response.completed`.
 *
 * Message in:  { origins, path, headers, body, expectTail, socket, concurrency, warmupMs, durationMs, measuredPids, supportPids,
 *                postgresDatabases, services }
 * Message out: { completed, errors, errorSamples, seconds, rps, latencyMs: {p50,p90,p99,max,mean}, cpuMicros,
 *                loadCpuMicros, supportCpuMicros, postgresCpuMicros, redisCpuMicros, machineCpuMicros,
 *                otherCpuMicros, interruptCpuMicros, stealCpuMicros }
 * `cpuMicros` is the CPU of every measured process tree together. `supportPids` are the other
 * processes of the setup (the mock behind a proxy); `postgresCpuMicros` and `redisCpuMicros` what
 * PostgreSQL (the server's own processes and the backends of `postgresDatabases`) and Redis used
 * (proc.mjs serviceCpuMicros); `machineCpuMicros` what every process on the machine used.
 * `otherCpuMicros` is what other processes used in the window (the interrupt and steal times are
 * apart; PostgreSQL and Redis are not "other" when `services` says the target uses them): anything
 * large means the figures were disturbed.
 */
import { Buffer } from 'node:buffer';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { allProcessTicks, busiestBetween, forestCpuMicros, machineBusyMicros, processTree, serviceCpuMicros } from './proc.mjs';

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
  const originOf = (index) => job.origins[index % job.origins.length];
  // One connection per worker sending to the origin: ceil((concurrency − index) ÷ origins) of them.
  const pools = job.origins.map((origin, index) => {
    const connections = Math.max(1, Math.ceil((job.concurrency - index) / job.origins.length));
    return new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 15_000, bodyTimeout: 15_000 });
  });
  const measuredCpu = () => forestCpuMicros(job.measuredPids);
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
  const supportCpu = () => forestCpuMicros(job.supportPids ?? []);
  let loadCpuStart;
  let loadCpu;

  const noteError = (text) => {
    if (measuring) errors += 1;
    if (errorSamples.length < 5) errorSamples.push(text.slice(0, 300));
  };

  const once = async (pool) => {
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

  const worker = async (index) => {
    if (job.socket) return socketWorker(originOf(index));
    const pool = pools[index % pools.length];
    while (running) await once(pool);
  };

  /** One socket, one turn after another; a socket that fails is opened again. */
  const socketWorker = async (origin) => {
    const create = JSON.stringify({ type: 'response.create', ...JSON.parse(job.body) });
    while (running) {
      const socket = new WebSocket(`${origin.replace(/^http/, 'ws')}${job.path}`, { headers: job.headers, perMessageDeflate: false });
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

  // The machine's totals are read right at the window's edges, the slower looks at /proc around
  // them, so that the parts of a cell's CPU split never add up to more than the machine had.
  setTimeout(() => {
    processesStart = allProcessTicks();
    cpuStart = measuredCpu();
    supportStart = supportCpu();
    loadCpuStart = process.cpuUsage();
    machineStart = machineBusyMicros();
    windowStart = process.hrtime.bigint();
    measuring = true;
  }, job.warmupMs);
  const done = new Promise((resolve) =>
    setTimeout(() => {
      measuring = false;
      windowEnd = process.hrtime.bigint();
      machineEnd = machineBusyMicros();
      loadCpu = process.cpuUsage(loadCpuStart);
      cpuEnd = measuredCpu();
      supportEnd = supportCpu();
      processesEnd = allProcessTicks();
      running = false;
      resolve();
    }, job.warmupMs + job.durationMs),
  );
  const workers = Array.from({ length: job.concurrency }, (_, index) => worker(index));
  await done;
  await Promise.race([Promise.all(workers), new Promise((resolve) => setTimeout(resolve, 5_000))]);
  await Promise.all(pools.map((pool) => pool.destroy()));

  const seconds = Number(windowEnd - windowStart) / 1e9;
  const services = serviceCpuMicros(processesStart, processesEnd, job.postgresDatabases ?? []);
  const servicesCpu = job.services === true ? services.postgres + services.redis : 0;
  const ours = new Set([process.pid, process.ppid, ...[...job.measuredPids, ...(job.supportPids ?? [])].flatMap(processTree), ...(job.services === true ? services.pids : [])]);
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
    postgresCpuMicros: services.postgres,
    redisCpuMicros: services.redis,
    machineCpuMicros: machineEnd.tasks - machineStart.tasks,
    otherCpuMicros: Math.max(0, machineEnd.tasks - machineStart.tasks - (cpuEnd - cpuStart) - (supportEnd - supportStart) - (loadCpu.user + loadCpu.system) - servicesCpu),
    interruptCpuMicros: machineEnd.interrupts - machineStart.interrupts,
    stealCpuMicros: machineEnd.steal - machineStart.steal,
    otherBusiest: busiestBetween(processesStart, processesEnd, seconds, ours),
  };
}
