/**
 * Reading a process tree's CPU time and resident memory from /proc (Linux only). A tree is a
 * process and all its descendants, so a gateway running cluster workers is measured whole.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of the utime/stime fields (`getconf CLK_TCK`, almost always 100). */
export const CLOCK_TICKS = readClockTicks();

function readClockTicks() {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
}

/** Parses /proc/<pid>/stat; the command name may hold spaces and parentheses, so split after the last ')'. */
function readStat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/**
 * CPU ticks, executable name (`comm`) and command line of every process on the machine, by pid (to
 * see who else was busy, and what PostgreSQL and Redis used).
 */
export function allProcessTicks() {
  const snapshot = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(name);
    if (stat === undefined) continue;
    let command = '';
    let executable = '';
    try {
      command = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().slice(0, 120);
      executable = readFileSync(`/proc/${name}/comm`, 'utf8').trim();
    } catch {
      // Gone already.
    }
    snapshot.set(Number(name), { ticks: stat.ticks, command, executable });
  }
  return snapshot;
}

/**
 * Whether a PostgreSQL process works for the benchmark: a client backend (its title names the
 * client's `host(port)` or `[local]`) connected to one of `databases`, or one of the server's own
 * processes (postmaster, WAL writer, checkpointer, background writer, autovacuum), which serve every
 * database alike. Backends of other databases (other users of the same server) are not counted.
 */
function servesBenchmark(command, databases) {
  const clientBackend = /\(\d+\)|\[local\]/.test(command);
  return !clientBackend || databases.some((database) => command.includes(` ${database} `));
}

/**
 * CPU time PostgreSQL and Redis used between two snapshots of allProcessTicks, in microseconds:
 * `{ postgres, redis, pids }`. PostgreSQL is counted as servesBenchmark says; Redis is one process
 * and counted whole (other clients of the same server included). Servers on another machine show 0.
 */
export function serviceCpuMicros(before, after, databases) {
  const totals = { postgres: 0, redis: 0, pids: [] };
  for (const [pid, { ticks, command, executable }] of after) {
    const service = executable === 'postgres' && servesBenchmark(command, databases) ? 'postgres' : executable === 'redis-server' ? 'redis' : undefined;
    if (service === undefined) continue;
    totals[service] += ((ticks - (before.get(pid)?.ticks ?? 0)) * 1_000_000) / CLOCK_TICKS;
    totals.pids.push(pid);
  }
  return totals;
}

/** The busiest processes between two snapshots, leaving out `excluded` pids: [{ pid, command, cores }]. */
export function busiestBetween(before, after, seconds, excluded, limit = 3) {
  const busy = [];
  for (const [pid, { ticks, command }] of after) {
    if (excluded.has(pid)) continue;
    const delta = ticks - (before.get(pid)?.ticks ?? 0);
    if (delta > 0) busy.push({ pid, command, cores: Number((delta / CLOCK_TICKS / seconds).toFixed(2)) });
  }
  return busy.sort((left, right) => right.cores - left.cores).slice(0, limit);
}

/** The pid and every live descendant of it. */
export function processTree(rootPid) {
  return processForest([rootPid]);
}

/** The pids and every live descendant of them, from one look at /proc. */
function processForest(rootPids) {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(name);
    if (stat === undefined) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push(Number(name));
    children.set(stat.ppid, list);
  }
  const tree = [];
  const pending = [...rootPids];
  while (pending.length > 0) {
    const pid = pending.pop();
    tree.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** User + system CPU time of the tree, in microseconds (resolution: one clock tick). */
export function treeCpuMicros(rootPid) {
  return forestCpuMicros([rootPid]);
}

/** User + system CPU time of the trees of several pids together (one look at /proc), in microseconds. */
export function forestCpuMicros(rootPids) {
  let ticks = 0;
  for (const pid of processForest(rootPids)) ticks += readStat(pid)?.ticks ?? 0;
  return (ticks * 1_000_000) / CLOCK_TICKS;
}

/** Resident set size of the tree, in bytes (the sum of each process's VmRSS). */
export function treeRssBytes(rootPid) {
  let kilobytes = 0;
  for (const pid of processTree(rootPid)) {
    try {
      const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match) kilobytes += Number(match[1]);
    } catch {
      // The process exited between the listing and the read.
    }
  }
  return kilobytes * 1024;
}

/**
 * CPU time the whole machine spent busy (all CPUs), in microseconds: `tasks` is what processes
 * account for (user, nice, system), `interrupts` the interrupt and softirq time that no process
 * is charged with (on loopback, much of the TCP receive path runs there), `steal` what the
 * hypervisor gave to other guests.
 */
export function machineBusyMicros() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const [user, nice, system, _idle, _iowait, irq, softirq, steal] = fields;
  const micros = (ticks) => (ticks * 1_000_000) / CLOCK_TICKS;
  return { tasks: micros(user + nice + system), interrupts: micros(irq + softirq), steal: micros(steal) };
}
